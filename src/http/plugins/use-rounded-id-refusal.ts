import {
  type DocumentNode,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  getOperationAST,
  isInputObjectType,
  isInputType,
  isListType,
  isNonNullType,
  typeFromAST,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { toGraphQLError, validationFailed } from '../../errors.js';

interface RoundedId {
  field: string;
  value: number;
}

/** The first `ID` in `value` (of `type`) that came as a JSON number beyond 2^53. */
function roundedId(value: unknown, type: GraphQLInputType, field: string): RoundedId | undefined {
  if (isNonNullType(type)) return roundedId(value, type.ofType, field);
  if (isListType(type)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const found = roundedId(item, type.ofType, field);
      if (found) return found;
    }
    return undefined;
  }
  if (isInputObjectType(type)) {
    if (!value || typeof value !== 'object') return undefined;
    const fields = type.getFields();
    for (const [name, item] of Object.entries(value)) {
      const inputField = fields[name];
      const found = inputField && roundedId(item, inputField.type, name);
      if (found) return found;
    }
    return undefined;
  }
  const unsafe = type.name === 'ID' && typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value);
  return unsafe ? { field, value } : undefined;
}

export function findRoundedId(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
): RoundedId | undefined {
  for (const definition of getOperationAST(document, operationName)?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    const found = type && isInputType(type) && name in variables ? roundedId(variables[name], type, name) : undefined;
    if (found) return found;
  }
  return undefined;
}

/**
 * Refuses an id sent as a JSON number above 2^53. JSON.parse has rounded it
 * before GraphQL sees it (9007199254740993 arrives as 9007199254740992), and
 * GraphQL's ID scalar would then quietly name another record. Pothos keeps
 * graphql-js' own ID scalar, so this is checked on the variables as sent, by
 * their declared types, before execution. Ids written in the query text, and
 * ids sent as strings, are exact.
 */
export function useRoundedIdRefusal(): Plugin {
  const check = ({ args, setResultAndStopExecution }: OperationHook) => {
    const variables = args.variableValues;
    if (!variables || Object.keys(variables).length === 0) return;
    const found = findRoundedId(args.schema, args.document, args.operationName, variables);
    if (!found) return;
    const error = validationFailed(
      found.field,
      `${found.field} is an id above 2^53 sent as a JSON number, which JSON has rounded (to ${found.value}): send it as a string.`,
    );
    setResultAndStopExecution({ errors: [toGraphQLError(error)] });
  };
  return { onExecute: check, onSubscribe: check };
}

interface OperationHook {
  args: {
    schema: GraphQLSchema;
    document: DocumentNode;
    operationName?: string | null;
    variableValues?: Record<string, unknown> | null;
  };
  setResultAndStopExecution(result: { errors: GraphQLError[] }): void;
}
