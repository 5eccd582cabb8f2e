import type { TestProject } from 'vitest/node';
import { applyPendingMigrations } from '../../src/migrations/migrations.js';
import { databaseUrl, dropDatabase, uniqueName, withAdmin } from './database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/**
 * Migrates one template database with the project's own migration command;
 * each test file then copies it, which takes milliseconds, and drops its copy.
 */
export default async function setup(project: TestProject) {
  const template = uniqueName('petstore_template');
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${template}"`));
  await applyPendingMigrations(databaseUrl(template));
  project.provide('templateDatabase', template);
  return async () => {
    await dropDatabase(template);
  };
}
