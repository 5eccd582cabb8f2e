import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { type FieldNode, type GraphQLObjectType, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { anonymous, scopes } from '../../src/auth/scopes.js';
import {
  argumentsOf,
  passesRules,
  prismaObjectOf,
  relationOf,
  rowReaderOf,
  rulesOfField,
  rulesOfType,
} from '../../src/http/query-plans/schema-facts.js';
import { schema } from '../../src/schema/index.js';

/**
 * The one module through which query plans read what Pothos and its Prisma plugin put in the built
 * schema (src/http/query-plans/schema-facts.ts), pinned: each fact read from this project's schema,
 * and the authorization rules read from a schema built here with every form scope-auth has. A
 * Pothos upgrade that moves one of them fails here, not silently in the plans.
 */

const type = (name: string) => schema.getType(name) as GraphQLObjectType;
const field = (typeName: string, name: string) => type(typeName).getFields()[name]!;
const rootField = (text: string): FieldNode => {
  const operation = parse(text).definitions[0] as OperationDefinitionNode;
  return operation.selectionSet.selections[0] as FieldNode;
};

describe('what the plans read of the Prisma plugin', () => {
  it('the model and the columns an object type always selects', () => {
    expect(prismaObjectOf(type('Pet'))).toEqual({ model: 'Pet', select: { id: true, name: true, categoryId: true, status: true } });
    expect(prismaObjectOf(type('Order'))?.model).toBe('Order');
    expect(prismaObjectOf(type('PageInfo'))).toBeUndefined();
    expect(prismaObjectOf(type('InventoryStatusTotal'))).toBeUndefined();
  });

  it('the relation a field reads', () => {
    expect(relationOf(field('Pet', 'category'))).toBe('category');
    expect(relationOf(field('Pet', 'inventory'))).toBe('inventory');
    expect(relationOf(field('Pet', 'orders'))).toBe('orders');
    expect(relationOf(field('Category', 'pets'))).toBe('pets');
    expect(relationOf(field('Pet', 'name'))).toBeUndefined();
  });
});

describe('what the plans read of Pothos', () => {
  it('how a scalar field reads its row: an exposed column, or a resolver of the row alone', () => {
    expect(rowReaderOf(field('InventoryStatusTotal', 'quantity'))?.({ quantity: 12 })).toBe(12);
    expect(rowReaderOf(field('Pet', 'name'))?.({ name: 'Rex' })).toBe('Rex');
    expect(rowReaderOf(field('Pet', 'id'))?.({ id: 7n })).toBe('7');
    // A field that needs its arguments or the context: no reader.
    expect(rowReaderOf(field('Query', 'pets'))).toBeUndefined();
  });

  it('a field\'s arguments as its resolver gets them, mapped by the int64 id plugin and the relay plugin', () => {
    expect(argumentsOf(field('Query', 'pet'), rootField('{ pet(id: "42") { id } }'), {}, schema)).toEqual({ id: 42n });
    expect(argumentsOf(field('Query', 'pet'), rootField('query ($id: ID!) { pet(id: $id) { id } }'), { id: '9007199254740993' }, schema)).toEqual({
      id: 9007199254740993n,
    });
    expect(() => argumentsOf(field('Query', 'pet'), rootField('{ pet(id: "x") { id } }'), {}, schema)).toThrow(/id/);
    const globalId = Buffer.from('Order:7').toString('base64');
    expect(argumentsOf(field('Query', 'node'), rootField(`{ node(id: "${globalId}") { nodeId } }`), {}, schema)).toMatchObject({ id: { typename: 'Order', id: '7' } });
    expect(() => argumentsOf(field('Query', 'node'), rootField('{ node(id: "Tm9wZToz") { nodeId } }'), {}, schema)).toThrow(/global id/);
  });

  it('a global id as a plan makes it from the row, as the relay plugin does', () => {
    expect(rowReaderOf(field('Pet', 'nodeId'))?.({ id: 7n })).toBe(Buffer.from('Pet:7').toString('base64'));
    expect(rowReaderOf(field('InventoryItem', 'nodeId'))?.({ petId: 7n })).toBe(Buffer.from('InventoryItem:7').toString('base64'));
  });

  it('the rules this schema states on fields', () => {
    expect(rulesOfField(field('Query', 'orders'))).toEqual([{ scope: scopes.readOrders }]);
    expect(rulesOfField(field('Pet', 'orders'))).toEqual([{ scope: scopes.readOrders }]);
    expect(rulesOfField(field('Mutation', 'placeOrder'))).toEqual([{ scope: scopes.writeOrders }]);
    expect(rulesOfField(field('Query', 'pets'))).toEqual([]);
    expect(rulesOfType(type('Pet'))).toEqual([]);
  });
});

describe('the rules scope-auth can state, read and evaluated as scope-auth does', () => {
  // A schema of its own, with every form of rule: on a field, a type, an interface; a map, a function; grants.
  const local = new SchemaBuilder<{ Context: { principal: { scopes: ReadonlySet<string> } }; AuthScopes: { scope: string } }>({
    plugins: [ScopeAuthPlugin],
    scopeAuth: { authScopes: (context: { principal: { scopes: ReadonlySet<string> } }) => ({ scope: (needed: string) => context.principal.scopes.has(needed) }) },
    // The Prisma plugin, loaded for the project's builder, makes its options required of every builder's types; this one has no model.
  } as never);
  const Named = local.interfaceRef<{ name: string }>('Named').implement({
    authScopes: { scope: 'named:read' },
    fields: (t) => ({ name: t.exposeString('name') }),
  });
  const Guarded = local.objectRef<{ name: string }>('Guarded').implement({
    interfaces: [Named],
    authScopes: { $any: { scope: 'a', $all: { scope: 'b' } } },
    fields: (t) => ({ mapped: t.string({ authScopes: { scope: 'field' }, resolve: () => 'x' }) }),
  });
  const ByRow = local.objectRef<{ name: string }>('ByRow').implement({
    authScopes: (row) => ({ scope: row.name }),
    fields: (t) => ({
      byArgs: t.string({ authScopes: (_row, args) => ({ scope: String(args) }), resolve: () => 'x' }),
      granting: t.string({ grantScopes: ['b'], resolve: () => 'x' }),
    }),
  });
  local.queryType({ fields: (t) => ({ guarded: t.field({ type: Guarded, resolve: () => ({ name: 'g' }) }), byRow: t.field({ type: ByRow, resolve: () => ({ name: 'r' }) }) }) });
  const built = local.toSchema();
  const localType = (name: string) => built.getType(name) as GraphQLObjectType;

  it('a map on a field, on a type and on its interfaces; null where a rule is a function or grants scopes', () => {
    expect(rulesOfField(localType('Guarded').getFields().mapped!)).toEqual([{ scope: 'field' }]);
    expect(rulesOfType(localType('Guarded'))).toEqual([{ $any: { scope: 'a', $all: { scope: 'b' } } }, { scope: 'named:read' }]);
    expect(rulesOfType(localType('ByRow'))).toBeNull();
    expect(rulesOfField(localType('ByRow').getFields().byArgs!)).toBeNull();
    expect(rulesOfField(localType('ByRow').getFields().granting!)).toBeNull();
  });

  it('each map evaluated by scope-auth itself, with this schema\'s scope loaders', async () => {
    const context = (...given: string[]) => ({ principal: { ...anonymous, subject: given.length ? 'someone' : undefined, scopes: new Set(given) } });
    const rule = [{ scope: scopes.readOrders }];
    expect(await passesRules(context(scopes.readOrders), rule)).toBe(true);
    expect(await passesRules(context(), rule)).toBe(false);
    expect(await passesRules(context(scopes.writeCatalog), rule)).toBe(false);
    const either = [{ $any: { scope: scopes.readOrders, $all: { scope: scopes.writeCatalog } } }];
    expect(await passesRules(context(scopes.writeCatalog), either)).toBe(true);
    expect(await passesRules(context(scopes.writeInventory), either)).toBe(false);
    const both = [{ $all: { scope: scopes.readOrders, $any: { scope: scopes.writeCatalog } } }];
    expect(await passesRules(context(scopes.readOrders), both)).toBe(false);
    expect(await passesRules(context(scopes.readOrders, scopes.writeCatalog), both)).toBe(true);
    // Scopes granted by a parent are not known before reading: not passed.
    expect(await passesRules(context(scopes.readOrders), [{ $granted: 'b' }])).toBe(false);
    expect(await passesRules(context(), [])).toBe(true);
  });
});
