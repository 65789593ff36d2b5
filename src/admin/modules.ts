import type { AdminModule } from './module.js';
import { accountModule } from './pages/account.pages.js';
import { accountsModule } from './pages/accounts.pages.js';
import { apiKeysModule } from './pages/api-keys.pages.js';
import { assignmentRulesModule } from './pages/assignment-rules.pages.js';
import { dashboardModule } from './pages/dashboard.pages.js';
import { dealStagesModule } from './pages/deal-stages.pages.js';
import { dealsModule } from './pages/deals.pages.js';
import { leadsModule } from './pages/leads.pages.js';
import { notesModule } from './pages/notes.pages.js';
import { objectsModule } from './pages/objects.pages.js';
import { privacyModule } from './pages/privacy.pages.js';
import { recordsModule } from './pages/records.pages.js';
import { sectionsModule } from './pages/sections.pages.js';
import { settingsModule } from './pages/settings.pages.js';
import { signInModule } from './pages/sign-in.pages.js';
import { taskCreateModule } from './pages/task-create.pages.js';
import { tasksModule } from './pages/tasks.pages.js';
import { usersModule } from './pages/users.pages.js';
import { webhooksModule } from './pages/webhooks.pages.js';

/**
 * Every console feature, in one list. A new feature (accounts, deals, custom objects and records, webhooks
 * under Configuration › Marketplace › API and Webhooks) adds its module here; its navigation entries appear
 * with it, so the console never links to pages that don't exist. See docs/console.md.
 */
export const ADMIN_MODULES: readonly AdminModule[] = [
  signInModule,
  accountModule,
  dashboardModule,
  sectionsModule,
  leadsModule,
  accountsModule,
  dealsModule,
  recordsModule,
  tasksModule,
  taskCreateModule,
  notesModule,
  apiKeysModule,
  assignmentRulesModule,
  dealStagesModule,
  objectsModule,
  settingsModule,
  privacyModule,
  usersModule,
  webhooksModule,
];
