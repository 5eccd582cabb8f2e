import { beforeAll, describe, expect, it } from 'vitest';
import { LegacyPetByIdDocument, PetByIdDocument, PetsDocument } from '../generated/graphql.js';
import { clientFor, expectError } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * Ids are int64 end to end: PostgreSQL BIGINT, Prisma BigInt, GraphQL ID
 * strings. 2^53 + 1 is the first integer a JavaScript number cannot hold
 * (it would read back as 2^53), so it proves no step goes through a number.
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

const aboveDoubles = 9007199254740993n; // 2^53 + 1
const itsNeighbour = 9007199254740992n; // 2^53, what a double would make of it
const int64Max = 9223372036854775807n;

beforeAll(async () => {
  await gateway.prisma.category.create({ data: { id: aboveDoubles, name: 'Big ids' } });
  await gateway.prisma.pet.create({
    data: {
      id: aboveDoubles,
      name: 'Two to the fifty-three plus one',
      categoryId: aboveDoubles,
      inventory: { create: { quantity: 3, status: 'available' } },
    },
  });
  await gateway.prisma.pet.create({
    data: { id: itsNeighbour, name: 'Two to the fifty-three', categoryId: aboveDoubles },
  });
  await gateway.prisma.pet.create({ data: { id: int64Max, name: 'The largest int64', categoryId: aboveDoubles } });
});

describe('int64 ids', () => {
  it('reads a pet with id 2^53 + 1 back exactly through pet(id:)', async () => {
    const { pet } = await client.ok(PetByIdDocument, { id: '9007199254740993' });
    expect(pet).toEqual({
      id: '9007199254740993',
      name: 'Two to the fifty-three plus one',
      categoryId: '9007199254740993',
      status: 'AVAILABLE',
      category: { id: '9007199254740993', name: 'Big ids' },
      inventory: { quantity: 3, status: 'AVAILABLE' },
    });
  });

  it('tells 2^53 and 2^53 + 1 apart', async () => {
    const { pet } = await client.ok(PetByIdDocument, { id: '9007199254740992' });
    expect(pet).toMatchObject({ id: '9007199254740992', name: 'Two to the fifty-three' });
  });

  it('round-trips the largest int64', async () => {
    const { pet } = await client.ok(PetByIdDocument, { id: '9223372036854775807' });
    expect(pet).toMatchObject({ id: '9223372036854775807', name: 'The largest int64', categoryId: '9007199254740993' });
  });

  it('lists the big ids exactly, in order, and the legacy lookup finds them too', async () => {
    const { pets } = await client.ok(PetsDocument, { first: 10 });
    expect(pets.edges.map((edge) => edge.node.id)).toEqual([
      '9007199254740992',
      '9007199254740993',
      '9223372036854775807',
    ]);
    const { getPetById } = await client.ok(LegacyPetByIdDocument, { petId: '9007199254740993' });
    expect(getPetById).toMatchObject({ id: '9007199254740993', categoryId: '9007199254740993' });
  });

  it.each(['9223372036854775808', '-9223372036854775809', '1e3', '12.0', 'abc', ''])(
    'refuses the id %j as a validation error',
    async (id) => {
      expectError(await client.send(PetByIdDocument, { id }), 'VALIDATION_FAILED');
    },
  );
});
