import { beforeAll, describe, expect, it } from 'vitest';
import {
  CategoriesDocument,
  CategoryByIdDocument,
  InventoryDocument,
  InventoryItemDocument,
  InventorySummaryDocument,
  LegacyPetByIdDocument,
  OrderByIdDocument,
  OrdersDocument,
  PetByIdDocument,
  PetOrdersDocument,
  type PetStatus,
  PetsDocument,
  type PetsQuery,
  type PetsQueryVariables,
  RootFieldsDocument,
} from '../generated/graphql.js';
import { clientFor, expectError } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * Every read of the API against one fixed catalogue, arranged directly in the
 * database. Nothing in this file writes, so every count below is exact.
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

type Status = 'available' | 'pending' | 'sold';
interface FixturePet {
  id: string;
  name: string;
  categoryId: string;
  status: Status;
}

const ids = { dogs: '', cats: '', birds: '', fish: '' };
const pets: FixturePet[] = [];
const named: Record<string, FixturePet> = {};
const orderIds = { rexOpen: '', rexComplete: '', scruffyOpen: '', fluffyOpen: '' };

const asGraphQL = (status: Status) => status.toUpperCase() as PetStatus;
const asNode = (pet: FixturePet) => ({ ...pet, status: asGraphQL(pet.status) });

beforeAll(async () => {
  const db = gateway.prisma;
  for (const name of ['Dogs', 'Cats', 'Birds', 'Fish'] as const) {
    const category = await db.category.create({ data: { name, description: `All the ${name.toLowerCase()}` } });
    ids[name.toLowerCase() as keyof typeof ids] = category.id.toString();
  }
  const add = async (name: string, category: keyof typeof ids, status: Status = 'available') => {
    const row = await db.pet.create({ data: { name, categoryId: BigInt(ids[category]), status } });
    const pet = { id: row.id.toString(), name, categoryId: ids[category], status };
    pets.push(pet);
    return pet;
  };
  named.rex = await add('Rex', 'dogs');
  named.fluffy = await add('Fluffy', 'cats', 'pending');
  named.truffle = await add('Truffle', 'dogs', 'sold');
  named.scruffy = await add('Scruffy', 'cats');
  named.bellaDog = await add('Bella', 'dogs');
  named.bellaFish = await add('Bella', 'fish');
  for (let i = 1; i <= 100; i++) await add(`Filler ${String(i).padStart(3, '0')}`, 'fish');

  // Stock in each state, consistent with the open orders arranged below.
  await db.inventoryItem.createMany({
    data: [
      { petId: BigInt(named.rex.id), quantity: 3, status: 'available' },
      { petId: BigInt(named.fluffy.id), quantity: 0, status: 'pending' },
      { petId: BigInt(named.truffle.id), quantity: 0, status: 'sold' },
      { petId: BigInt(named.scruffy.id), quantity: 2, status: 'available' },
    ],
  });
  const order = async (pet: FixturePet, quantity: number, complete = false, shipDate?: string) =>
    (
      await db.order.create({
        data: { petId: BigInt(pet.id), quantity, complete, shipDate: shipDate ? new Date(shipDate) : null },
      })
    ).id.toString();
  orderIds.rexOpen = await order(named.rex, 1);
  orderIds.rexComplete = await order(named.rex, 2, true, '2026-01-02T03:04:05.000Z');
  orderIds.scruffyOpen = await order(named.scruffy, 1);
  orderIds.fluffyOpen = await order(named.fluffy, 1);
});

const byId = (a: FixturePet, b: FixturePet) => Number(BigInt(a.id) - BigInt(b.id));
const byName = (a: FixturePet, b: FixturePet) => (a.name < b.name ? -1 : a.name > b.name ? 1 : byId(a, b));

/** Walks a list of pets page by page through `after` cursors, checking each page's pageInfo. */
async function walkForward(variables: PetsQueryVariables, pageSize: number) {
  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 50; page++) {
    const { pets: connection }: PetsQuery = await client.ok(PetsDocument, { ...variables, first: pageSize, after });
    seen.push(...connection.edges.map((edge) => edge.node.id));
    expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
    if (connection.edges.length > 0) {
      expect(connection.pageInfo.startCursor).toBe(connection.edges[0]!.cursor);
      expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)!.cursor);
    }
    if (!connection.pageInfo.hasNextPage) return seen;
    expect(connection.edges).toHaveLength(pageSize);
    after = connection.pageInfo.endCursor;
  }
  throw new Error('the list never ended');
}

describe('pets', () => {
  it('lists 20 pets by id when no page size is given, with the total count of the list', async () => {
    const { pets: connection } = await client.ok(PetsDocument);
    expect(connection.totalCount).toBe(106);
    expect(connection.edges).toHaveLength(20);
    expect(connection.edges.map((edge) => edge.node)).toEqual([...pets].sort(byId).slice(0, 20).map(asNode));
    expect(connection.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('gives up to 100 pets on one page', async () => {
    const { pets: connection } = await client.ok(PetsDocument, { first: 100 });
    expect(connection.edges).toHaveLength(100);
    expect(connection.totalCount).toBe(106);
    expect(connection.pageInfo.hasNextPage).toBe(true);
  });

  it('refuses a page of 101 rather than cutting it short', async () => {
    const response = await client.send(PetsDocument, { first: 101 });
    expectError(response, 'VALIDATION_FAILED', 'first');
    expect(response.errors![0]!.message).toContain('100');
    expectError(await client.send(PetsDocument, { last: 101 }), 'VALIDATION_FAILED', 'last');
  });

  it('refuses a negative page size', async () => {
    expectError(await client.send(PetsDocument, { first: -1 }), 'VALIDATION_FAILED');
  });

  it('walks every pet exactly once, in id order, through after cursors', async () => {
    const seen = await walkForward({}, 30);
    expect(seen).toEqual([...pets].sort(byId).map((pet) => pet.id));
  });

  it('pages backwards with last and before', async () => {
    const sorted = [...pets].sort(byId);
    const { pets: first30 } = await client.ok(PetsDocument, { first: 30 });
    const cursorOf25th = first30.edges[24]!.cursor;
    const { pets: page } = await client.ok(PetsDocument, { last: 5, before: cursorOf25th });
    expect(page.edges.map((edge) => edge.node.id)).toEqual(sorted.slice(19, 24).map((pet) => pet.id));
    expect(page.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    expect(page.totalCount).toBe(106);

    const { pets: lastThree } = await client.ok(PetsDocument, { last: 3 });
    expect(lastThree.edges.map((edge) => edge.node.id)).toEqual(sorted.slice(-3).map((pet) => pet.id));
    expect(lastThree.pageInfo.hasPreviousPage).toBe(true);
  });

  it('takes the page after a cursor without repeating the cursor row', async () => {
    const sorted = [...pets].sort(byId);
    const { pets: firstPage } = await client.ok(PetsDocument, { first: 2 });
    const { pets: next } = await client.ok(PetsDocument, { first: 2, after: firstPage.pageInfo.endCursor });
    expect(next.edges.map((edge) => edge.node.id)).toEqual([sorted[2]!.id, sorted[3]!.id]);
    expect(next.pageInfo.hasPreviousPage).toBe(true);
  });

  it('refuses a cursor it did not issue', async () => {
    expectError(await client.send(PetsDocument, { first: 2, after: 'not-a-cursor' }), 'VALIDATION_FAILED');
    const forged = Buffer.from('GPC:S:robert').toString('base64');
    expectError(await client.send(PetsDocument, { first: 2, after: forged }), 'VALIDATION_FAILED', 'after');
  });

  it('refuses cursors that point both ways', async () => {
    const { pets: page } = await client.ok(PetsDocument, { first: 2 });
    const cursor = page.pageInfo.endCursor;
    expectError(await client.send(PetsDocument, { first: 2, before: cursor }), 'VALIDATION_FAILED');
    expectError(await client.send(PetsDocument, { last: 2, after: cursor }), 'VALIDATION_FAILED');
  });

  it('filters by status', async () => {
    const pending = await client.ok(PetsDocument, { filter: { status: 'PENDING' } });
    expect(pending.pets.totalCount).toBe(1);
    expect(pending.pets.edges.map((edge) => edge.node)).toEqual([asNode(named.fluffy!)]);
    const sold = await client.ok(PetsDocument, { filter: { status: 'SOLD' } });
    expect(sold.pets.edges.map((edge) => edge.node.name)).toEqual(['Truffle']);
    const available = await client.ok(PetsDocument, { filter: { status: 'AVAILABLE' }, first: 100 });
    expect(available.pets.totalCount).toBe(104);
    expect(available.pets.edges.every((edge) => edge.node.status === 'AVAILABLE')).toBe(true);
  });

  it('filters by category', async () => {
    const { pets: dogs } = await client.ok(PetsDocument, { filter: { categoryId: ids.dogs } });
    expect(dogs.totalCount).toBe(3);
    expect(dogs.edges.map((edge) => edge.node.name)).toEqual(['Rex', 'Truffle', 'Bella']);
    const { pets: birds } = await client.ok(PetsDocument, { filter: { categoryId: ids.birds } });
    expect(birds).toMatchObject({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false } });
  });

  it('filters by a part of the name, ignoring case', async () => {
    for (const text of ['uff', 'UFF']) {
      const { pets: found } = await client.ok(PetsDocument, { filter: { nameContains: text } });
      expect(found.totalCount).toBe(3);
      expect(found.edges.map((edge) => edge.node.name)).toEqual(['Fluffy', 'Truffle', 'Scruffy']);
    }
    const { pets: none } = await client.ok(PetsDocument, { filter: { nameContains: 'zebra' } });
    expect(none.totalCount).toBe(0);
  });

  it('combines filters, and counts what they match', async () => {
    const { pets: found } = await client.ok(PetsDocument, {
      filter: { categoryId: ids.dogs, status: 'AVAILABLE', nameContains: 'e' },
    });
    expect(found.totalCount).toBe(2);
    expect(found.edges.map((edge) => edge.node.name)).toEqual(['Rex', 'Bella']);
  });

  it('orders by name, ties broken by id, both ways', async () => {
    const ascending = [...pets].sort(byName);
    const { pets: asc } = await client.ok(PetsDocument, { first: 4, orderBy: { field: 'NAME' } });
    expect(asc.edges.map((edge) => edge.node.id)).toEqual(ascending.slice(0, 4).map((pet) => pet.id));
    expect(asc.edges.map((edge) => edge.node.name)).toEqual(['Bella', 'Bella', 'Filler 001', 'Filler 002']);

    const { pets: desc } = await client.ok(PetsDocument, { first: 4, orderBy: { field: 'NAME', direction: 'DESC' } });
    expect(desc.edges.map((edge) => edge.node.name)).toEqual(['Truffle', 'Scruffy', 'Rex', 'Fluffy']);
  });

  it('orders by id descending', async () => {
    const { pets: desc } = await client.ok(PetsDocument, { first: 3, orderBy: { field: 'ID', direction: 'DESC' } });
    expect(desc.edges.map((edge) => edge.node.id)).toEqual(
      [...pets]
        .sort(byId)
        .reverse()
        .slice(0, 3)
        .map((pet) => pet.id),
    );
  });

  it('keeps the order and the filter while paging through cursors', async () => {
    const seen = await walkForward(
      { filter: { categoryId: ids.fish }, orderBy: { field: 'NAME', direction: 'DESC' } },
      7,
    );
    const expected = pets
      .filter((pet) => pet.categoryId === ids.fish)
      .sort(byName)
      .reverse()
      .map((pet) => pet.id);
    expect(seen).toEqual(expected);
    expect(seen).toHaveLength(101);
  });
});

describe('single lookups', () => {
  it('finds a pet with its category and stock', async () => {
    const { pet } = await client.ok(PetByIdDocument, { id: named.rex!.id });
    expect(pet).toEqual({
      id: named.rex!.id,
      name: 'Rex',
      categoryId: ids.dogs,
      status: 'AVAILABLE',
      category: { id: ids.dogs, name: 'Dogs' },
      inventory: { quantity: 3, status: 'AVAILABLE' },
    });
    const { pet: withoutStock } = await client.ok(PetByIdDocument, { id: named.bellaFish!.id });
    expect(withoutStock?.inventory).toBeNull();
  });

  it('answers null, not an error, for ids that exist nowhere', async () => {
    expect(await client.send(PetByIdDocument, { id: '987654321' })).toEqual({ data: { pet: null } });
    expect(await client.send(CategoryByIdDocument, { id: '987654321' })).toEqual({ data: { category: null } });
    expect(await client.send(OrderByIdDocument, { id: '987654321' })).toEqual({ data: { order: null } });
    expect(await client.send(InventoryItemDocument, { petId: '987654321' })).toEqual({
      data: { inventoryItem: null },
    });
    expect(await client.send(LegacyPetByIdDocument, { petId: '987654321' })).toEqual({
      data: { getPetById: null },
      extensions: { deprecations: [{ field: 'Query.getPetById', reason: `Use pet(id:) instead. getPetById will be removed on 2027-06-30 (sunset date).`, sunset: '2027-06-30' }] },
    });
  });

  it("answers null for a pet's inventory entry when it has none", async () => {
    expect(await client.send(InventoryItemDocument, { petId: named.bellaDog!.id })).toEqual({
      data: { inventoryItem: null },
    });
  });

  it('finds a category with its pets as a connection', async () => {
    const { category } = await client.ok(CategoryByIdDocument, { id: ids.dogs, petsFirst: 2 });
    expect(category).toMatchObject({ id: ids.dogs, name: 'Dogs', description: 'All the dogs' });
    expect(category!.pets.totalCount).toBe(3);
    expect(category!.pets.edges.map((edge) => edge.node.name)).toEqual(['Rex', 'Truffle']);
    expect(category!.pets.pageInfo.hasNextPage).toBe(true);
    const { category: rest } = await client.ok(CategoryByIdDocument, {
      id: ids.dogs,
      petsFirst: 2,
      petsAfter: category!.pets.pageInfo.endCursor,
    });
    expect(rest!.pets.edges.map((edge) => edge.node.name)).toEqual(['Bella']);
    expect(rest!.pets.pageInfo.hasNextPage).toBe(false);
  });

  it("gives a category's pets 20 to a page unless asked", async () => {
    const { category } = await client.ok(CategoryByIdDocument, { id: ids.fish });
    expect(category!.pets.totalCount).toBe(101);
    expect(category!.pets.edges).toHaveLength(20);
  });

  it('finds an order with its pet; the ship date is ISO 8601', async () => {
    const { order } = await client.ok(OrderByIdDocument, { id: orderIds.rexComplete });
    expect(order).toEqual({
      id: orderIds.rexComplete,
      petId: named.rex!.id,
      quantity: 2,
      shipDate: '2026-01-02T03:04:05.000Z',
      complete: true,
      pet: { id: named.rex!.id, name: 'Rex' },
    });
  });

  it("lists a pet's orders as a connection, oldest first", async () => {
    const { pet } = await client.ok(PetOrdersDocument, { id: named.rex!.id, first: 1 });
    expect(pet!.orders.totalCount).toBe(2);
    expect(pet!.orders.edges.map((edge) => edge.node)).toEqual([
      { id: orderIds.rexOpen, quantity: 1, complete: false },
    ]);
    const { pet: next } = await client.ok(PetOrdersDocument, {
      id: named.rex!.id,
      first: 1,
      after: pet!.orders.pageInfo.endCursor,
    });
    expect(next!.orders.edges.map((edge) => edge.node.id)).toEqual([orderIds.rexComplete]);
    expect(next!.orders.pageInfo.hasNextPage).toBe(false);
  });

  it('finds an inventory entry with its pet', async () => {
    const { inventoryItem } = await client.ok(InventoryItemDocument, { petId: named.fluffy!.id });
    expect(inventoryItem).toEqual({
      petId: named.fluffy!.id,
      quantity: 0,
      status: 'PENDING',
      pet: { id: named.fluffy!.id, status: 'PENDING' },
    });
  });
});

describe('categories', () => {
  it('lists categories by id, paged by cursor, with the total count', async () => {
    const { categories: first } = await client.ok(CategoriesDocument, { first: 3 });
    expect(first.totalCount).toBe(4);
    expect(first.edges.map((edge) => edge.node.name)).toEqual(['Dogs', 'Cats', 'Birds']);
    expect(first.edges[0]!.node).toEqual({ id: ids.dogs, name: 'Dogs', description: 'All the dogs' });
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const { categories: rest } = await client.ok(CategoriesDocument, { first: 3, after: first.pageInfo.endCursor });
    expect(rest.edges.map((edge) => edge.node.name)).toEqual(['Fish']);
    expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const { categories: back } = await client.ok(CategoriesDocument, { last: 2, before: rest.edges[0]!.cursor });
    expect(back.edges.map((edge) => edge.node.name)).toEqual(['Cats', 'Birds']);
  });

  it('refuses a page of 101', async () => {
    expectError(await client.send(CategoriesDocument, { first: 101 }), 'VALIDATION_FAILED', 'first');
  });
});

describe('orders', () => {
  const listed = async (filter: { petId?: string; complete?: boolean } | undefined) => {
    const { orders } = await client.ok(OrdersDocument, { filter });
    expect(orders.totalCount).toBe(orders.edges.length);
    return orders.edges.map((edge) => edge.node.id);
  };

  it('lists every order by id', async () => {
    expect(await listed(undefined)).toEqual([
      orderIds.rexOpen,
      orderIds.rexComplete,
      orderIds.scruffyOpen,
      orderIds.fluffyOpen,
    ]);
  });

  it('filters by pet, by completeness, and by both', async () => {
    expect(await listed({ petId: named.rex!.id })).toEqual([orderIds.rexOpen, orderIds.rexComplete]);
    expect(await listed({ complete: true })).toEqual([orderIds.rexComplete]);
    expect(await listed({ complete: false })).toEqual([orderIds.rexOpen, orderIds.scruffyOpen, orderIds.fluffyOpen]);
    expect(await listed({ petId: named.rex!.id, complete: false })).toEqual([orderIds.rexOpen]);
    expect(await listed({ petId: named.bellaDog!.id })).toEqual([]);
  });

  it('pages through orders', async () => {
    const { orders: page } = await client.ok(OrdersDocument, { first: 3 });
    expect(page.totalCount).toBe(4);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const { orders: rest } = await client.ok(OrdersDocument, { first: 3, after: page.pageInfo.endCursor });
    expect(rest.edges.map((edge) => edge.node.id)).toEqual([orderIds.fluffyOpen]);
    expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('refuses a page of 101', async () => {
    expectError(await client.send(OrdersDocument, { first: 101 }), 'VALIDATION_FAILED', 'first');
  });
});

describe('inventory', () => {
  it('lists every entry by pet id with its pet', async () => {
    const { inventory } = await client.ok(InventoryDocument);
    expect(inventory.totalCount).toBe(4);
    expect(inventory.edges.map((edge) => edge.node)).toEqual([
      {
        petId: named.rex!.id,
        quantity: 3,
        status: 'AVAILABLE',
        pet: { id: named.rex!.id, name: 'Rex', status: 'AVAILABLE' },
      },
      {
        petId: named.fluffy!.id,
        quantity: 0,
        status: 'PENDING',
        pet: { id: named.fluffy!.id, name: 'Fluffy', status: 'PENDING' },
      },
      {
        petId: named.truffle!.id,
        quantity: 0,
        status: 'SOLD',
        pet: { id: named.truffle!.id, name: 'Truffle', status: 'SOLD' },
      },
      {
        petId: named.scruffy!.id,
        quantity: 2,
        status: 'AVAILABLE',
        pet: { id: named.scruffy!.id, name: 'Scruffy', status: 'AVAILABLE' },
      },
    ]);
  });

  it('filters by status and counts what the filter matches', async () => {
    const petIds = async (status: PetStatus) => {
      const { inventory } = await client.ok(InventoryDocument, { filter: { status } });
      expect(inventory.totalCount).toBe(inventory.edges.length);
      return inventory.edges.map((edge) => edge.node.petId);
    };
    expect(await petIds('AVAILABLE')).toEqual([named.rex!.id, named.scruffy!.id]);
    expect(await petIds('PENDING')).toEqual([named.fluffy!.id]);
    expect(await petIds('SOLD')).toEqual([named.truffle!.id]);
  });

  it('pages through entries', async () => {
    const { inventory: page } = await client.ok(InventoryDocument, { first: 3 });
    expect(page.pageInfo.hasNextPage).toBe(true);
    const { inventory: rest } = await client.ok(InventoryDocument, { first: 3, after: page.pageInfo.endCursor });
    expect(rest.edges.map((edge) => edge.node.petId)).toEqual([named.scruffy!.id]);
  });

  it('refuses a page of 101', async () => {
    expectError(await client.send(InventoryDocument, { first: 101 }), 'VALIDATION_FAILED', 'first');
  });

  it('sums entries and stock per status: the classic inventory map', async () => {
    const { inventorySummary } = await client.ok(InventorySummaryDocument);
    expect(inventorySummary).toEqual([
      { status: 'AVAILABLE', entries: 2, quantity: 5 },
      { status: 'PENDING', entries: 1, quantity: 0 },
      { status: 'SOLD', entries: 1, quantity: 0 },
    ]);
  });
});

describe('the legacy lookup getPetById', () => {
  it('still finds a pet, in the legacy shape', async () => {
    const { getPetById } = await client.ok(LegacyPetByIdDocument, { petId: named.truffle!.id });
    expect(getPetById).toEqual({
      id: named.truffle!.id,
      name: 'Truffle',
      categoryId: ids.dogs,
      status: 'SOLD',
      category: { name: 'Dogs' },
    });
  });

  it('is deprecated in introspection, naming pet(id:) and the sunset date', async () => {
    const { query } = await client.ok(RootFieldsDocument);
    const legacy = query!.fields!.find((field) => field.name === 'getPetById');
    expect(legacy?.isDeprecated).toBe(true);
    expect(legacy?.deprecationReason).toContain('pet(id:)');
    expect(legacy?.deprecationReason).toContain('2027-06-30');
    const replacement = query!.fields!.find((field) => field.name === 'pet');
    expect(replacement?.isDeprecated).toBe(false);
  });
});
