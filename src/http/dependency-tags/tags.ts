import {
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type FragmentDefinitionNode,
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  type GraphQLNamedType,
  GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  isListType,
  isObjectType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { type Change, type ChangeDeclaration, changesOfEvent, TOLD_BY_EVENTS } from '../../domain/changes.js';
import type { DomainEvent } from '../../domain/events.js';
import { PetStatus } from '../../generated/prisma/enums.js';
import { pageSize } from '../../pothos-plugins/paging.js';

/**
 * What a cached answer depends on, and what a write changes, as tags:
 *
 * - `Pet:42`: that entity (a type and its id) appears in the answer;
 * - `Pet:list`: the answer lists or counts pets (a connection or a list of
 *   them), or found none where one could be (a lookup or a relation that
 *   answered null), so a pet that comes, goes or moves can change it;
 * - `Pet:any`: the answer holds a pet it cannot name (its id was not selected):
 *   any write to a pet outdates it;
 * - `Pet:list:name`, `Order:list@petId=7`: narrower lists (see listTags);
 * - `Pet:list:name@categoryId=3#first`: the first pages by name of a category (see firstPagesTag);
 * - `Pet:*`: the answer holds a pet at all;
 * - `*`: every answer (a write whose effects are not known here changes it);
 * - `*:write`: an answer whose parts could not all be told apart: every write changes it.
 *
 * A write changes `Type:id` and `Type:list` of each entity it touched, read
 * from its arguments and from the domain events it published after commit
 * (an order's pet, whose stock and status moved); a write whose effects are
 * not known here changes `*`. So a rename of pet 7 outdates answers holding
 * pet 7 and the lists of pets ordered or filtered by name (within its
 * category, or across all; a first page by name only when the new name lands
 * among its rows), but not another category's, nor `pet(id: 8)`, a list in id
 * order that does not show it, nor a `category(id:)` that names no pet; a
 * stock count that leaves the entry's status as it was outdates that entry,
 * and the totals, not the lists of entries.
 */

export const EVERYTHING = '*';
export const ANY_WRITE = '*:write';

/** The field that identifies an entity of each type, where it is not `id`. */
const IDENTITY: Record<string, string> = { InventoryItem: 'petId' };
/** Relations whose object has the identity of the object it hangs from (one-to-one by key). */
const SAME_IDENTITY = new Set(['Pet.inventory', 'InventoryItem.pet']);
/** Types without an identity that sum up another type's rows: any write to one of those rows outdates them. */
const SUMMARIES: Record<string, string> = { InventoryStatusTotal: 'InventoryItem' };

/**
 * Fields by which no list of their type is ordered or filtered: a change to them alone moves the row in
 * no list (a pet's name moves it only in the lists by name, which have tags of their own). Checked
 * against the schema's list arguments (test/cache/declared-changes.test.ts).
 */
export const MOVES_NO_LIST: Record<string, ReadonlySet<string>> = {
  Pet: new Set(['name']),
  Category: new Set(['name', 'description']),
  InventoryItem: new Set(['quantity']),
};

/**
 * How far down its category's order by name a rename is told to have landed, at most (update_pet counts
 * the pets before it up to this many): the first page of a list holds at most `pageSize.max` rows, so a
 * rename landing at least this far down changes none of the category's first pages by name.
 */
export const RANKED_ROWS = 100;

/**
 * The first pages by name of a category's pets (of one status, when given): no cursor, at most
 * RANKED_ROWS rows. A rename outdates them only when it may have landed among their rows: a pet that
 * comes or goes otherwise is on the page (its own tag) or changes every list (`Pet:list`).
 */
export const firstPagesTag = (categoryId: string, status?: string) => `Pet:list:name@categoryId=${categoryId}${status ? `@status=${status}` : ''}#first`;
/** Carried by a rename that tells where it landed: one without it (a gateway from before) outdates every first page of its category. */
const rankedTag = (categoryId: string) => `Pet:list:name@categoryId=${categoryId}#ranked`;
const NAME_PAGES = /^Pet:list:name@categoryId=(\d+)$/;
const statuses = Object.values(PetStatus);

/** Every first page of a category: unfiltered, and of each status. */
function allFirstPages(categoryId: string): string[] {
  return [firstPagesTag(categoryId), ...statuses.map((status) => firstPagesTag(categoryId, status))];
}

/**
 * The tags a write's notice stamps, from another instance that may run an earlier version: a rename
 * that does not say where it landed (no `#ranked`) outdates every first page of its category.
 */
export function withUntoldRanks(tags: readonly string[]): readonly string[] {
  let added: string[] | undefined;
  for (const tag of tags) {
    const category = NAME_PAGES.exec(tag)?.[1];
    if (category !== undefined && !tags.includes(rankedTag(category))) (added ??= []).push(...allFirstPages(category));
  }
  return added ? [...tags, ...added] : tags;
}

/**
 * The stamps to read for an answer's tags where the write log's entries cannot be read (the stamps
 * themselves, versions.ts): a write of an earlier version stamped a category's name-ordered pages
 * only, so a first page reads those too.
 */
export function stampsToRead(tags: readonly string[]): readonly string[] {
  const extra = tags.filter((tag) => tag.endsWith('#first')).map((tag) => tag.replace(/(@status=[^#]*)?#first$/, ''));
  return extra.length > 0 ? [...new Set([...tags, ...extra])] : tags;
}

type Fragments = Record<string, FragmentDefinitionNode>;

const identityOf = (type: GraphQLObjectType) => {
  const field = IDENTITY[type.name] ?? 'id';
  return field in type.getFields() ? field : undefined;
};

/** The node type of a connection (`pageInfo` and `nodes`/`edges`) or an edge (`node` and `cursor`). */
function listedType(type: GraphQLObjectType): GraphQLNamedType | undefined {
  const fields = type.getFields();
  if (fields.node && fields.cursor) return getNamedType(fields.node.type);
  if (fields.pageInfo && fields.nodes) return getNamedType(fields.nodes.type);
  return undefined;
}

/** The tags of an answer, from its data walked beside the operation's selections. */
export function answerTags(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  data: unknown,
): Set<string> {
  const tags = new Set<string>([EVERYTHING]);
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root || !data || typeof data !== 'object') {
    tags.add(ANY_WRITE);
    return tags;
  }
  const fragments: Fragments = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  walkObject({ schema, fragments, tags, variables: variables ?? undefined, arguments: new Map(), identityKeys: new Map() }, root, operation.selectionSet, data as Record<string, unknown>, undefined, true);
  return tags;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Fragments;
  tags: Set<string>;
  variables: Record<string, unknown> | undefined;
  /** Each field's arguments, worked out once however many items of a list it answers for (null: they could not be). */
  arguments: Map<FieldNode, Record<string, unknown> | null>;
  /** Where each selection answers its type's identity (the response key of its `id`, aliased or not), worked out once per selection. */
  identityKeys: Map<SelectionSetNode, Map<GraphQLObjectType, string | null>>;
}

function argumentsOf(walk: Walk, field: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> | null {
  if (field.args.length === 0) return {};
  let args = walk.arguments.get(node);
  if (args === undefined) {
    try {
      args = getArgumentValues(field, node, walk.variables);
    } catch {
      args = null;
    }
    walk.arguments.set(node, args);
  }
  return args;
}

/**
 * What a list depends on, from the field that answers it. Mostly `Type:list`; more narrowly:
 * the orders of one pet (`orders(filter: { petId })`, `Pet.orders`) depend on that pet's orders
 * only (`Order:list@petId=7`), and a list of pets ordered or filtered by name also on renames
 * (`Pet:list:name`), which leave lists ordered by id alone.
 */
function listTags(walk: Walk, parent: GraphQLObjectType, parentIdentity: unknown, field: GraphQLField<unknown, unknown>, node: FieldNode, item: GraphQLNamedType): string[] {
  const args = argumentsOf(walk, field, node);
  if (!args) return [ANY_WRITE];
  const filter = (args.filter ?? {}) as Record<string, unknown>;
  if (item.name === 'Order') {
    const petId = parent.name === 'Pet' && field.name === 'orders' ? parentIdentity : filter.petId;
    return [petId !== undefined && petId !== null ? `Order:list@petId=${String(petId)}` : 'Order:list'];
  }
  if (item.name === 'Pet') {
    const order = (args.orderBy as { field?: unknown } | undefined)?.field;
    const byName = String(order).toUpperCase() === 'NAME' || filter.nameContains !== undefined;
    if (!byName) return ['Pet:list'];
    // Ordered or filtered by name within one category: only renames in that category move it.
    const category = parent.name === 'Category' && field.name === 'pets' ? parentIdentity : filter.categoryId;
    if (category === undefined || category === null) return ['Pet:list', 'Pet:list:name'];
    // Its first page in name order: only renames that land among its rows.
    if (isFirstPageByName(args, filter)) return ['Pet:list', firstPagesTag(String(category), filter.status === undefined || filter.status === null ? undefined : String(filter.status))];
    return ['Pet:list', `Pet:list:name@categoryId=${String(category)}`];
  }
  return [`${item.name}:list`];
}

/** A page of pets from the start of their order by name, ascending, of at most RANKED_ROWS rows, not narrowed by name. */
function isFirstPageByName(args: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  const direction = (args.orderBy as { direction?: unknown } | undefined)?.direction;
  const first = args.first ?? pageSize.default;
  return (
    args.after == null &&
    args.before == null &&
    args.last == null &&
    typeof first === 'number' &&
    first <= RANKED_ROWS &&
    (direction === undefined || direction === null || direction === 'asc') &&
    filter.nameContains == null
  );
}

/**
 * The identity the object a field answers must have when its selection does not show it: the
 * argument a lookup was given (`pet(id:)`, `getPetById(petId:)`), or the object's it hangs from.
 */
function identityHint(walk: Walk, parent: GraphQLObjectType, parentIdentity: unknown, field: GraphQLField<unknown, unknown>, node: FieldNode, child: GraphQLNamedType) {
  if (SAME_IDENTITY.has(`${parent.name}.${field.name}`)) return parentIdentity;
  if (field.args.length === 0 || !isObjectType(child)) return undefined;
  const identity = identityOf(child);
  const args = identity === undefined ? null : argumentsOf(walk, field, node);
  if (!identity || !args) return undefined;
  return args[identity] ?? args[`${child.name[0]!.toLowerCase()}${child.name.slice(1)}Id`];
}

function walkObject(
  walk: Walk,
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  value: Record<string, unknown>,
  hint: unknown,
  isRoot = false,
) {
  const { tags } = walk;
  const identity = identityOf(type);
  const key = identity === undefined ? null : identityKeyOf(walk, type, selectionSet, identity);
  // Read where the selection put it: `pid: id` shows it under another name, `id: name` shows something else under its name.
  const shown = key === null ? undefined : value[key];
  const id = typeof shown === 'string' || typeof shown === 'number' ? shown : (hint as string | number | undefined);
  // A connection or an edge: its list tags were added by the field that answered it, with its arguments.
  const inList = listedType(type) !== undefined;
  if (!isRoot && !inList) {
    if (SUMMARIES[type.name]) tags.add(`${SUMMARIES[type.name]}:any`);
    else if (type.name !== 'PageInfo') {
      tags.add(`${type.name}:*`);
      // Without a known identity, an entity is outdated by any write to its type.
      tags.add(id !== undefined && id !== null ? `${type.name}:${String(id)}` : `${type.name}:any`);
    }
  }
  const fields = type.getFields();
  forEachField(selectionSet, type, walk.fragments, (responseKey, node) => {
    const field = fields[node.name.value];
    if (!field || !node.selectionSet) return;
    const named = getNamedType(field.type);
    const child = value[responseKey];
    const connection = isObjectType(named) ? listedType(named) : undefined;
    if (connection || (!inList && isListType(getNullableType(field.type)) && (isObjectType(named) || isAbstractType(named)))) {
      for (const tag of listTags(walk, type, id, field, node, connection ?? named)) tags.add(tag);
    }
    walkValue(walk, named, node.selectionSet, child, identityHint(walk, type, id, field, node, named));
  });
}

/** The response key under which `selectionSet` answers `type`'s identity field; null when it does not select it. */
function identityKeyOf(walk: Walk, type: GraphQLObjectType, selectionSet: SelectionSetNode, identity: string): string | null {
  let byType = walk.identityKeys.get(selectionSet);
  if (!byType) walk.identityKeys.set(selectionSet, (byType = new Map()));
  let key = byType.get(type);
  if (key === undefined) {
    let found: string | null = null;
    forEachField(selectionSet, type, walk.fragments, (responseKey, node) => {
      if (found === null && node.name.value === identity) found = responseKey;
    });
    key = found;
    byType.set(type, key);
  }
  return key;
}

function walkValue(walk: Walk, type: GraphQLNamedType, selectionSet: SelectionSetNode, value: unknown, hint: unknown) {
  const { tags, schema } = walk;
  if (Array.isArray(value)) {
    for (const item of value) walkValue(walk, type, selectionSet, item, undefined);
    return;
  }
  if (value === null || value === undefined) {
    // Nothing found where something could be: a write that adds one must outdate this answer.
    tags.add(isObjectType(type) ? `${listedType(type)?.name ?? type.name}:list` : ANY_WRITE);
    return;
  }
  if (typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  let concrete: GraphQLNamedType | undefined = type;
  if (isAbstractType(type)) {
    const typename = record.__typename;
    concrete = typeof typename === 'string' ? (schema.getType(typename) ?? undefined) : undefined;
  }
  if (concrete instanceof GraphQLObjectType) walkObject(walk, concrete, selectionSet, record, hint);
  else tags.add(ANY_WRITE);
}

/**
 * Each field selected on `type` (through fragments whose condition it meets), with its response key.
 * A fragment spread again at the same level is walked once (`spread`): its fields give the same tags
 * again, and a fragment spread twice in each of twenty fragments would be a million walks.
 */
function forEachField(
  selectionSet: SelectionSetNode,
  type: GraphQLObjectType,
  fragments: Fragments,
  visit: (responseKey: string, node: FieldNode) => void,
  spread = new Set<string>(),
) {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      visit(selection.alias?.value ?? selection.name.value, selection);
    } else {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        if (spread.has(selection.name.value)) continue;
        spread.add(selection.name.value);
      }
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments[selection.name.value] : selection;
      if (!fragment) continue;
      const condition = fragment.typeCondition?.name.value;
      // A fragment on an interface or union the type belongs to also applies; walking it where it
      // does not only adds tags (never removes one), so it is walked whenever its fields exist here.
      if (condition && condition !== type.name && !type.getInterfaces().some((i) => i.name === condition)) {
        const fields = type.getFields();
        const applies = fragment.selectionSet.selections.every(
          (inner) => inner.kind !== Kind.FIELD || inner.name.value === '__typename' || inner.name.value in fields,
        );
        if (!applies) continue;
      }
      forEachField(fragment.selectionSet, type, fragments, visit, spread);
    }
  }
}

/**
 * What one write changed, as tags: from what each mutation field declares it changes (beside it in
 * the schema, src/domain/changes.ts), and from the events it published. A field that declares
 * nothing, or whose arguments cannot be read, outdates every answer.
 */
export function writeTags(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | undefined,
  events: DomainEvent[],
): Set<string> {
  const tags = new Set<string>([ANY_WRITE]);
  const operation = getOperationAST(document, operationName);
  const mutation = schema.getMutationType();
  if (!operation || !mutation) return new Set([ANY_WRITE, EVERYTHING]);
  const fields = mutation.getFields();
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) {
      tags.add(EVERYTHING);
      continue;
    }
    const field = fields[selection.name.value];
    if (!field) continue;
    const declared = field.extensions.changes as ChangeDeclaration | undefined;
    if (declared === undefined) {
      tags.add(EVERYTHING);
      continue;
    }
    if (declared === TOLD_BY_EVENTS) continue;
    let args: Record<string, unknown>;
    try {
      args = getArgumentValues(field, selection, variables);
    } catch {
      tags.add(EVERYTHING);
      continue;
    }
    for (const change of declared(args)) addChangeTags(tags, change);
  }
  for (const event of events) for (const change of changesOfEvent(event)) addChangeTags(tags, change);
  return tags;
}

/** The tags a change outdates (see the tags at the top of this file). */
function addChangeTags(tags: Set<string>, change: Change) {
  const type = 'added' in change ? change.added : 'changed' in change ? change.changed : change.removed;
  tags.add(`${type}:any`);
  if ('added' in change) {
    tags.add(`${type}:list`);
    return;
  }
  if (change.id !== undefined) tags.add(`${type}:${change.id}`);
  // Rows not named (a pet's orders going with it): every answer holding one of its type.
  else tags.add(`${type}:*`);
  if (change.ofPet !== undefined) tags.add(`${type}:list@petId=${change.ofPet}`);
  const fields = 'changed' in change ? change.fields : undefined;
  const unlisted = MOVES_NO_LIST[type];
  if (fields === undefined || fields.some((field) => !unlisted?.has(field))) tags.add(`${type}:list`);
  if (type === 'Pet' && 'changed' in change && fields?.includes('name')) {
    // A rename moves a pet only in lists ordered or filtered by name: those of the category it is in,
    // which its event tells (petChanged); a rename that does not say outdates every list of pets.
    tags.add('Pet:list:name');
    const category = change.inCategory;
    if (category === undefined) {
      tags.add('Pet:list');
      return;
    }
    tags.add(`Pet:list:name@categoryId=${category}`);
    const rank = change.nameRank;
    if (!rank) {
      for (const tag of allFirstPages(category)) tags.add(tag);
      return;
    }
    // Where it landed: among the first RANKED_ROWS of its category, and of its status, or further down.
    tags.add(rankedTag(category));
    if (rank.inCategory < RANKED_ROWS) tags.add(firstPagesTag(category));
    if (rank.inStatus < RANKED_ROWS) tags.add(firstPagesTag(category, rank.status));
  }
}
