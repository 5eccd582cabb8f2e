import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, inject } from 'vitest';
import { createPrismaClient, type PrismaClient } from '../../src/db.js';
import { createLogger } from '../../src/logger.js';
import { createGateway } from '../../src/server.js';
import { createMigratedDatabase, dropDatabase } from './database.js';

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>;
}

export interface TestGateway {
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  databaseUrl: string;
  /** A Prisma client on the same database, for arranging data and checking what was written. */
  prisma: PrismaClient;
  /** SQL statements the gateway's Prisma client has run since the last reset. */
  statements: string[];
  graphql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>>;
}

export interface GatewayTestOptions {
  legacySunsetDate?: string;
}

/**
 * Gives the test file its own migrated database and a gateway serving it over
 * real HTTP on a free port, both gone after the file's tests.
 */
export function useTestGateway(options: GatewayTestOptions = {}): TestGateway {
  const gateway = { statements: [] as string[] } as TestGateway;
  let stop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const database = await createMigratedDatabase(inject('templateDatabase'));
    const gatewayPrisma = createPrismaClient({ url: database.url, poolSize: 10, logQueries: true });
    gatewayPrisma.$on('query', (event) => gateway.statements.push(event.query));
    const prisma = createPrismaClient({ url: database.url, poolSize: 4 });
    const { app } = createGateway({
      prisma: gatewayPrisma,
      logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
      graphiql: true,
      legacySunsetDate: options.legacySunsetDate ?? '2027-06-30',
    });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const listening = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(listening));
    });
    const { port } = server.address() as AddressInfo;
    Object.assign(gateway, {
      baseUrl: `http://127.0.0.1:${port}`,
      databaseUrl: database.url,
      prisma,
      async graphql(query: string, variables?: Record<string, unknown>) {
        const response = await fetch(`${gateway.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query, variables }),
        });
        return response.json();
      },
    });
    stop = async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gatewayPrisma.$disconnect();
      await prisma.$disconnect();
      await dropDatabase(database.name);
    };
  });

  afterAll(() => stop());
  return gateway;
}
