import { createSubstringIndex } from './0001_foundation.js';
import { notNull, withSeq, type Migration } from './helpers.js';

/** Accounts (encrypted contacts, name search), deals (name search, filters) and each organization's deal stages. */
export const accountsDeals: Migration = {
  async up({ db, dialect }) {
    await withSeq(db.schema.createTable('accounts'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', notNull)
      .addColumn('domain', 'text')
      .addColumn('email_enc', 'text')
      .addColumn('email_bidx', 'text')
      .addColumn('phone_enc', 'text')
      .addColumn('phone_bidx', 'text')
      .addColumn('industry', 'text')
      .addColumn('website', 'text')
      .addColumn('owner_id', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('accounts_org_seq').on('accounts').columns(['organization_id', 'seq']).execute();
    await db.schema.createIndex('accounts_email').on('accounts').columns(['email_bidx', 'seq']).execute();
    await db.schema.createIndex('accounts_phone').on('accounts').columns(['phone_bidx', 'seq']).execute();
    await createSubstringIndex(db, dialect, 'accounts', 'name');

    // amount is text: the exact decimal as sent (no float or numeric-scale rewriting on either database).
    // expected_close_date is a calendar day 'YYYY-MM-DD'.
    await withSeq(db.schema.createTable('deals'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', notNull)
      .addColumn('stage', 'text', notNull)
      .addColumn('amount', 'text')
      .addColumn('currency', 'text')
      .addColumn('account_id', 'text')
      .addColumn('lead_id', 'text')
      .addColumn('owner_id', 'text')
      .addColumn('expected_close_date', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('deals_org_seq').on('deals').columns(['organization_id', 'seq']).execute();
    await db.schema.createIndex('deals_org_stage').on('deals').columns(['organization_id', 'stage', 'seq']).execute();
    await db.schema.createIndex('deals_org_account').on('deals').columns(['organization_id', 'account_id', 'seq']).execute();
    await db.schema.createIndex('deals_org_owner').on('deals').columns(['organization_id', 'owner_id', 'seq']).execute();
    await createSubstringIndex(db, dialect, 'deals', 'name');

    // No row: the organization uses the default stages.
    await db.schema
      .createTable('deal_stages')
      .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id'))
      .addColumn('stages', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
  },
};
