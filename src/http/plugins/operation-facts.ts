import {
  type DocumentNode,
  type GraphQLSchema,
  getOperationAST,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';

/**
 * What the plugins need to know about an operation before it runs: its name,
 * and the deprecated fields it selects. Worked out once per document (one walk
 * with the schema's type information) and kept as long as the document is:
 * yoga's parse cache hands every request with the same text the same
 * DocumentNode, so a request with a known text costs two map lookups.
 */

/** A deprecated field an operation selects. */
export interface DeprecatedUse {
  /** `Type.field` */
  field: string;
  /** The schema's deprecation reason. */
  reason: string;
  /** How many times the operation selects it, counting each spread of a fragment that does. */
  uses: number;
}

export interface OperationFacts {
  /** The operation's name, else its kind, else anonymous. */
  name: string;
  /** Each deprecated field the operation (and the fragments it spreads) selects, once, with how often. */
  deprecated: readonly DeprecatedUse[];
}

/** What one walk of a document finds in each of its operations and fragments. */
interface Definition {
  deprecated: DeprecatedUse[];
  spreads: string[];
}

interface DocumentWalk {
  operations: Map<string, Definition>;
  fragments: Map<string, Definition>;
  /** Per operation name asked for (`''` when none was given). */
  facts: Map<string, OperationFacts>;
}

// Per schema, as a gateway configured with another sunset date serves other deprecation reasons.
const walks = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, DocumentWalk>>();

export function operationFacts(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationFacts {
  let bySchema = walks.get(schema);
  if (!bySchema) {
    bySchema = new WeakMap();
    walks.set(schema, bySchema);
  }
  let walk = bySchema.get(document);
  if (!walk) {
    walk = walkDocument(schema, document);
    bySchema.set(document, walk);
  }
  const key = operationName ?? '';
  let facts = walk.facts.get(key);
  if (!facts) {
    const operation = getOperationAST(document, operationName);
    const own = operation ? walk.operations.get(operation.name?.value ?? '') : undefined;
    facts = {
      name: operation?.name?.value ?? operation?.operation ?? 'anonymous',
      deprecated: own ? [...usesOf(own, walk.fragments, new Map(), new Set()).values()] : [],
    };
    walk.facts.set(key, facts);
  }
  return facts;
}

function walkDocument(schema: GraphQLSchema, document: DocumentNode): DocumentWalk {
  const operations = new Map<string, Definition>();
  const fragments = new Map<string, Definition>();
  let current: Definition = { deprecated: [], spreads: [] };
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition(node) {
        current = { deprecated: [], spreads: [] };
        operations.set(node.name?.value ?? '', current);
      },
      FragmentDefinition(node) {
        current = { deprecated: [], spreads: [] };
        fragments.set(node.name.value, current);
      },
      FragmentSpread(node) {
        current.spreads.push(node.name.value);
      },
      Field() {
        const field = typeInfo.getFieldDef();
        const parent = typeInfo.getParentType();
        if (field?.deprecationReason && parent) {
          current.deprecated.push({ field: `${parent.name}.${field.name}`, reason: field.deprecationReason, uses: 1 });
        }
      },
    }),
  );
  return { operations, fragments, facts: new Map() };
}

/**
 * The deprecated fields a definition selects, by field, with their uses. Each fragment's are worked
 * out once (`done`) and multiplied by its spreads: a fragment spread twice in each of twenty
 * fragments is twenty walks, not a million.
 */
function usesOf(
  definition: Definition,
  fragments: Map<string, Definition>,
  done: Map<string, Map<string, DeprecatedUse>>,
  entered: Set<string>,
): Map<string, DeprecatedUse> {
  const found = new Map<string, DeprecatedUse>();
  // Each spread adds its fragment's uses once more.
  const add = (use: DeprecatedUse) => {
    const known = found.get(use.field);
    if (known) known.uses += use.uses;
    else found.set(use.field, { ...use });
  };
  for (const use of definition.deprecated) add(use);
  for (const name of definition.spreads) {
    const fragment = fragments.get(name);
    // A fragment that spreads itself is refused by validation; it must not loop here first.
    if (!fragment || entered.has(name)) continue;
    let ofFragment = done.get(name);
    if (!ofFragment) {
      entered.add(name);
      ofFragment = usesOf(fragment, fragments, done, entered);
      entered.delete(name);
      done.set(name, ofFragment);
    }
    for (const use of ofFragment.values()) add(use);
  }
  return found;
}

