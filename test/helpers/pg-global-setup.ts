import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    pgRunUrl: string;
  }
}

/** One fresh database per test run (each test file then works in its own schema), dropped at the end. */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `crm_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const run = new pg.Client({ connectionString: url.toString() });
  await run.connect();
  await run.query('create extension if not exists pg_trgm');
  await run.end();
  project.provide('pgRunUrl', url.toString());
  return async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  };
}
