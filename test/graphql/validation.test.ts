import { beforeAll, describe, expect, it } from 'vitest';
import {
  CancelOrderDocument,
  CategoryByIdDocument,
  CompleteOrderDocument,
  CreateCategoryDocument,
  CreatePetDocument,
  DeleteCategoryDocument,
  DeletePetDocument,
  InventoryItemDocument,
  LegacyPetByIdDocument,
  OrderByIdDocument,
  OrdersDocument,
  PetByIdDocument,
  PetOrdersDocument,
  PetsDocument,
  PlaceOrderDocument,
  UpdateCategoryDocument,
  UpdateInventoryDocument,
  UpdatePetDocument,
} from '../generated/graphql.js';
import { clientFor, expectError } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';
import type { GraphQLAnswer } from '../support/http.js';

/**
 * What the API refuses before it writes: bad ids, values out of bounds,
 * control characters, oversized pages, and requests GraphQL itself rejects.
 * Each refusal is VALIDATION_FAILED naming the field, and leaves the database
 * exactly as it was. (An order's quantity: orders/place-order.test.ts.)
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

let categoryId = '';
let petId = '';
beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs', description: 'Good dogs' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 5, status: 'available' } });
  await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
  [categoryId, petId] = [category.id.toString(), pet.id.toString()];
});

/** Every row of every table, so that "nothing was written" is checked, not assumed. */
async function snapshot(): Promise<string> {
  const db = gateway.prisma;
  const tables = await Promise.all([
    db.category.findMany({ orderBy: { id: 'asc' } }),
    db.pet.findMany({ orderBy: { id: 'asc' } }),
    db.order.findMany({ orderBy: { id: 'asc' } }),
    db.inventoryItem.findMany({ orderBy: { petId: 'asc' } }),
  ]);
  return JSON.stringify(tables, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
}

/** Asserts that `work` leaves every table as it was. */
async function writesNothing(work: () => Promise<void>) {
  const before = await snapshot();
  await work();
  expect(await snapshot()).toBe(before);
}

describe('invalid ids', () => {
  const invalid = [
    'abc',
    '1.5',
    '0',
    '-1',
    '1e3',
    '0x10',
    '',
    '9223372036854775808', // int64 max + 1
    '18446744073709551616',
    '123456789012345678901234567890',
  ];

  const operations: Array<[string, string, (id: string) => Promise<GraphQLAnswer<unknown>>]> = [
    ['pet(id:)', 'id', (id) => client.send(PetByIdDocument, { id })],
    ['getPetById(petId:)', 'petId', (id) => client.send(LegacyPetByIdDocument, { petId: id })],
    ['category(id:)', 'id', (id) => client.send(CategoryByIdDocument, { id })],
    ['order(id:)', 'id', (id) => client.send(OrderByIdDocument, { id })],
    ['inventoryItem(petId:)', 'petId', (id) => client.send(InventoryItemDocument, { petId: id })],
    ['pets(filter: { categoryId })', 'categoryId', (id) => client.send(PetsDocument, { filter: { categoryId: id } })],
    ['orders(filter: { petId })', 'petId', (id) => client.send(OrdersDocument, { filter: { petId: id } })],
    ['updateCategory(id:)', 'id', (id) => client.send(UpdateCategoryDocument, { id, input: { name: 'Hounds' } })],
    ['deleteCategory(id:)', 'id', (id) => client.send(DeleteCategoryDocument, { id })],
    [
      'createPet(categoryId)',
      'categoryId',
      (id) => client.send(CreatePetDocument, { input: { name: 'Max', categoryId: id } }),
    ],
    ['updatePet(id:)', 'id', (id) => client.send(UpdatePetDocument, { id, input: { name: 'Max' } })],
    [
      'updatePet(categoryId)',
      'categoryId',
      (id) => client.send(UpdatePetDocument, { id: petId, input: { categoryId: id } }),
    ],
    ['deletePet(id:)', 'id', (id) => client.send(DeletePetDocument, { id })],
    [
      'updateInventory(petId:)',
      'petId',
      (id) => client.send(UpdateInventoryDocument, { petId: id, input: { quantity: 3 } }),
    ],
    ['placeOrder(petId)', 'petId', (id) => client.send(PlaceOrderDocument, { input: { petId: id, quantity: 1 } })],
    ['completeOrder(id:)', 'id', (id) => client.send(CompleteOrderDocument, { id })],
    ['cancelOrder(id:)', 'id', (id) => client.send(CancelOrderDocument, { id })],
  ];

  for (const [operation, field, send] of operations) {
    it(`${operation} refuses ids that are not int64 ids, naming ${field}`, async () => {
      await writesNothing(async () => {
        for (const id of invalid) {
          const error = expectError(await send(id), 'VALIDATION_FAILED', field);
          expect(error.message, id).toContain(field);
        }
      });
    });
  }

  it('accepts the largest int64 id, which simply finds nothing', async () => {
    expect(await client.send(PetByIdDocument, { id: '9223372036854775807' })).toEqual({ data: { pet: null } });
    expectError(
      await client.send(UpdateInventoryDocument, { petId: '9223372036854775807', input: { quantity: 1 } }),
      'NOT_FOUND',
    );
  });
});

describe('ids above 2^53', () => {
  // Both would be rounded by a JSON number: 2^53 + 1 becomes 2^53, 2^63 - 1 becomes 2^63.
  const bigPetId = '9007199254740993';
  const bigCategoryId = '9223372036854775807';
  const bigOrderId = '4611686018427387905';

  beforeAll(async () => {
    await gateway.prisma.category.create({ data: { id: BigInt(bigCategoryId), name: 'Big numbers' } });
    await gateway.prisma.pet.create({
      data: { id: BigInt(bigPetId), name: 'Biggie', categoryId: BigInt(bigCategoryId) },
    });
  });

  it('round-trip exactly through lookups and lists', async () => {
    const { pet } = await client.ok(PetByIdDocument, { id: bigPetId });
    expect(pet).toMatchObject({
      id: bigPetId,
      categoryId: bigCategoryId,
      category: { id: bigCategoryId, name: 'Big numbers' },
    });
    const { pets } = await client.ok(PetsDocument, { filter: { categoryId: bigCategoryId } });
    expect(pets.edges.map((edge) => edge.node.id)).toEqual([bigPetId]);
    // Its cursor works too: there is nothing after it.
    const { pets: after } = await client.ok(PetsDocument, {
      filter: { categoryId: bigCategoryId },
      after: pets.pageInfo.endCursor,
    });
    expect(after.edges).toEqual([]);
    const { category } = await client.ok(CategoryByIdDocument, { id: bigCategoryId });
    expect(category?.pets.edges).toEqual([{ node: { id: bigPetId, name: 'Biggie' } }]);
  });

  it('round-trip exactly through the writes', async () => {
    const { updateInventory } = await client.ok(UpdateInventoryDocument, {
      petId: bigPetId,
      input: { quantity: 2 },
    });
    expect(updateInventory).toMatchObject({ petId: bigPetId, pet: { id: bigPetId } });
    const { placeOrder } = await client.ok(PlaceOrderDocument, { input: { petId: bigPetId, quantity: 1 } });
    expect(placeOrder.petId).toBe(bigPetId);
    expect(await gateway.prisma.order.count({ where: { petId: BigInt(bigPetId) } })).toBe(1);

    await gateway.prisma.order.create({ data: { id: BigInt(bigOrderId), petId: BigInt(bigPetId), quantity: 1 } });
    const { completeOrder } = await client.ok(CompleteOrderDocument, { id: bigOrderId });
    expect(completeOrder).toMatchObject({ id: bigOrderId, petId: bigPetId, complete: true });
  });
});

describe('names', () => {
  const tooLong = 'a'.repeat(101);
  const refused: Array<[string, string]> = [
    ['empty', ''],
    ['only spaces', '   '],
    ['101 characters', tooLong],
    ['101 emoji', '🐶'.repeat(101)],
    ['a NUL', 'Rex\u0000'],
    ['a bell', 'Rex\u0007'],
    ['a newline', 'Rex\nMax'],
    ['a tab', 'Rex\tMax'],
    ['an escape sequence', '\u001B[31mRex'],
    ['a DEL', 'Rex\u007F'],
    ['a C1 control', 'Rex\u0085'],
  ];

  for (const [what, value] of refused) {
    it(`refuses a name with ${what}, in all four writes that take one`, async () => {
      await writesNothing(async () => {
        const responses = [
          await client.send(CreateCategoryDocument, { input: { name: value } }),
          await client.send(UpdateCategoryDocument, { id: categoryId, input: { name: value } }),
          await client.send(CreatePetDocument, { input: { name: value, categoryId } }),
          await client.send(UpdatePetDocument, { id: petId, input: { name: value } }),
        ];
        for (const response of responses) {
          expectError(response, 'VALIDATION_FAILED', 'name');
          expect(response.data).toBeNull();
        }
      });
    });
  }

  it('refuses a null name in an update', async () => {
    await writesNothing(async () => {
      expectError(
        await client.send(UpdatePetDocument, { id: petId, input: { name: null } }),
        'VALIDATION_FAILED',
        'name',
      );
      expectError(
        await client.send(UpdateCategoryDocument, { id: categoryId, input: { name: null } }),
        'VALIDATION_FAILED',
        'name',
      );
    });
  });

  it('trims names, and takes 1 to 100 characters once trimmed', async () => {
    const hundred = 'b'.repeat(100);
    const { createCategory } = await client.ok(CreateCategoryDocument, { input: { name: `  ${hundred}\n` } });
    expect(createCategory.name).toBe(hundred);
    const { createPet } = await client.ok(CreatePetDocument, { input: { name: ' X ', categoryId } });
    expect(createPet.name).toBe('X');
    expect((await gateway.prisma.pet.findUniqueOrThrow({ where: { id: BigInt(createPet.id) } })).name).toBe('X');
  });

  it('counts characters, not UTF-16 units: 100 emoji is a valid name', async () => {
    const emoji = '🐶'.repeat(100);
    const { createPet } = await client.ok(CreatePetDocument, { input: { name: emoji, categoryId } });
    expect(createPet.name).toBe(emoji);
    const { createCategory } = await client.ok(CreateCategoryDocument, { input: { name: 'Chiens 🐕 et chats 🐈' } });
    expect(createCategory.name).toBe('Chiens 🐕 et chats 🐈');
  });
});

describe('descriptions', () => {
  it('takes up to 1000 characters, trimmed', async () => {
    const thousand = 'd'.repeat(1000);
    const { createCategory } = await client.ok(CreateCategoryDocument, {
      input: { name: 'Long', description: ` ${thousand} ` },
    });
    expect(createCategory.description).toBe(thousand);
  });

  it('refuses 1001 characters', async () => {
    await writesNothing(async () => {
      const long = 'd'.repeat(1001);
      expectError(
        await client.send(CreateCategoryDocument, { input: { name: 'Longer', description: long } }),
        'VALIDATION_FAILED',
        'description',
      );
      expectError(
        await client.send(UpdateCategoryDocument, { id: categoryId, input: { description: long } }),
        'VALIDATION_FAILED',
        'description',
      );
    });
  });

  it('keeps line breaks (also as a browser sends them) and tabs', async () => {
    const text = 'Line one\r\nLine two\n\tindented';
    const { createCategory } = await client.ok(CreateCategoryDocument, { input: { name: 'Lines', description: text } });
    expect(createCategory.description).toBe(text);
  });

  it('refuses other control characters', async () => {
    await writesNothing(async () => {
      for (const description of ['Nul\u0000', 'Bell\u0007', '\u001B[2J', 'Del\u007F']) {
        expectError(
          await client.send(UpdateCategoryDocument, { id: categoryId, input: { description } }),
          'VALIDATION_FAILED',
          'description',
        );
      }
    });
  });
});

describe('stock counts', () => {
  it('takes 0 to 1,000,000', async () => {
    for (const quantity of [0, 1_000_000]) {
      const { updateInventory } = await client.ok(UpdateInventoryDocument, { petId, input: { quantity } });
      expect(updateInventory.quantity).toBe(quantity);
    }
    await client.ok(UpdateInventoryDocument, { petId, input: { quantity: 5 } });
  });

  it('refuses negative and more than 1,000,000, naming quantity', async () => {
    await writesNothing(async () => {
      for (const quantity of [-1, 1_000_001]) {
        const error = expectError(
          await client.send(UpdateInventoryDocument, { petId, input: { quantity } }),
          'VALIDATION_FAILED',
          'quantity',
        );
        expect(error.message).toContain('1000000');
      }
      const huge = await client.sendUnchecked(UpdateInventoryDocument, { petId, input: { quantity: 2 ** 40 } });
      expect(expectError(huge, 'VALIDATION_FAILED').message).toContain('quantity');
    });
  });
});

describe('page sizes of nested connections', () => {
  it("refuses 101 of a category's pets or of a pet's orders", async () => {
    expectError(
      await client.send(CategoryByIdDocument, { id: categoryId, petsFirst: 101 }),
      'VALIDATION_FAILED',
      'first',
    );
    expectError(await client.send(PetOrdersDocument, { id: petId, first: 101 }), 'VALIDATION_FAILED', 'first');
  });

  it('accepts 100', async () => {
    const { category } = await client.ok(CategoryByIdDocument, { id: categoryId, petsFirst: 100 });
    expect(category?.pets.totalCount).toBeGreaterThan(0);
  });
});

describe('pages that go both ways', () => {
  const lists: Array<[string, (args: string) => string, () => Record<string, unknown>]> = [
    ['pets', (args) => `{ pets(${args}) { edges { node { id } } } }`, () => ({})],
    ['categories', (args) => `{ categories(${args}) { nodes { id } } }`, () => ({})],
    ['orders', (args) => `{ orders(${args}) { nodes { id } } }`, () => ({})],
    ['inventory', (args) => `{ inventory(${args}) { nodes { petId } } }`, () => ({})],
    ["a category's pets", (args) => `query ($id: ID!) { category(id: $id) { pets(${args}) { nodes { id } } } }`, () => ({ id: categoryId })],
    ["a pet's orders", (args) => `query ($id: ID!) { pet(id: $id) { orders(${args}) { nodes { id } } } }`, () => ({ id: petId })],
  ];

  it.each(lists)('%s: first with last is refused, naming last, every time it is asked', async (_list, query, variables) => {
    // Before, the size came from first and the direction from last: first: 5, last: 1 gave the last five.
    for (let time = 0; time < 2; time++) {
      const response = await gateway.graphql(query('first: 5, last: 1'), variables());
      const error = expectError(response, 'VALIDATION_FAILED', 'last');
      expect(error.message).toBe('Ask for first (forward, with after) or last (backward, with before), not both.');
    }
  });

  it('every other way of paging two ways at once is refused too; one way is answered', async () => {
    const category = await gateway.prisma.category.create({ data: { name: 'Two ways' } });
    const one = await gateway.prisma.pet.create({ data: { name: 'One', categoryId: category.id } });
    const two = await gateway.prisma.pet.create({ data: { name: 'Two', categoryId: category.id } });
    const filter = `filter: { categoryId: "${category.id}" }`;
    const { pets } = await client.ok(PetsDocument, { first: 2, filter: { categoryId: category.id.toString() } });
    const [after, before] = [pets.pageInfo.startCursor!, pets.pageInfo.endCursor!];
    for (const args of [`first: 1, before: "${before}"`, `last: 1, after: "${after}"`, `first: 1, after: "${after}", before: "${before}"`]) {
      expectError(await gateway.graphql(`{ pets(${filter}, ${args}) { nodes { id } } }`), 'VALIDATION_FAILED');
    }
    const forward = await gateway.graphql<{ pets: { nodes: unknown[] } }>(`{ pets(${filter}, first: 1, after: "${after}") { nodes { id } } }`);
    const backward = await gateway.graphql<{ pets: { nodes: unknown[] } }>(`{ pets(${filter}, last: 1, before: "${before}") { nodes { id } } }`);
    expect([forward.errors, backward.errors]).toEqual([undefined, undefined]);
    expect([forward.data!.pets.nodes, backward.data!.pets.nodes]).toEqual([[{ id: String(two.id) }], [{ id: String(one.id) }]]);
  });
});

describe('requests GraphQL itself refuses', () => {
  const cases: Array<[string, string, Record<string, unknown>?]> = [
    ['a syntax error', '{ pets(first: 1) { edges { node { id } }'],
    ['an unknown field', '{ pets { edges { node { id nickname } } } }'],
    ['a missing required argument', '{ pet { id } }'],
    ['an unknown enum value', '{ pets(filter: { status: LOST }) { totalCount } }'],
    ['a variable of the wrong type', 'query ($id: ID!) { pet(id: $id) { id } }', { id: { nested: true } }],
    ['a missing variable', 'query ($id: ID!) { pet(id: $id) { id } }', {}],
  ];
  for (const [what, query, variables] of cases) {
    it(`answers VALIDATION_FAILED to ${what}`, async () => {
      await writesNothing(async () => {
        const response = await gateway.graphql(query, variables);
        expect(response.data ?? null).toBeNull();
        expectError(response, 'VALIDATION_FAILED');
      });
    });
  }
});

describe('fields that cannot be merged', () => {
  it('are one error, where it is, however many rule sets look for it', async () => {
    // @defer and @stream bring their own overlapping-fields rule in place of graphql-js's.
    const response = await gateway.graphql('{ pets(first: 1) { totalCount } pets: categories(first: 1) { totalCount } }');
    expect(response.data ?? null).toBeNull();
    expect(response.errors).toEqual([
      expect.objectContaining({
        message: 'Fields "pets" conflict because "pets" and "categories" are different fields. Use different aliases on the fields to fetch both if this was intentional.',
        locations: [{ line: 1, column: 3 }, { line: 1, column: 33 }],
        extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }),
      }),
    ]);
  });

  it('include one list streamed two ways, told once, every time it is sent', async () => {
    for (let sent = 1; sent <= 2; sent++) {
      const response = await gateway.graphql(
        '{ pets(first: 3) { nodes @stream(initialCount: 1) { name } nodes @stream(initialCount: 2) { name } } }',
      );
      expect(response.data ?? null).toBeNull();
      expect(response.errors).toEqual([
        expect.objectContaining({
          message: 'Fields "nodes" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.',
          extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }),
        }),
      ]);
    }
  });

  it('are looked for within a budget: a thousand fields of one name are refused, not compared pair by pair', async () => {
    const response = await gateway.graphql(`{ ${'__typename '.repeat(1_000)}}`);
    expect(response.data ?? null).toBeNull();
    expect(response.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }) })]);
  });
});
