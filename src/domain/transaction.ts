import type { Prisma } from '../generated/prisma/client.js';

/** The client of one database transaction, as Prisma's interactive transactions hand it out. */
export type Tx = Prisma.TransactionClient;
