import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import {
  buildSchema,
  getNamedType,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isUnionType,
} from 'graphql';
import {
  type ChangeKind,
  type ContractChange,
  deprecationNoticeProblem,
  type Exemption,
  sunsetDateIn,
  sunsetHasPassed,
} from './policy.js';

/**
 * The changes between two GraphQL schemas (SDL), found by GraphQL Inspector's
 * diff and judged by the policy: a breaking change is let through when the
 * element it touches was deprecated in the baseline with a sunset date that
 * has passed, or was marked @stability (EXPERIMENTAL, BETA); so is a change to
 * a type only such elements lead to.
 */
export async function graphqlChanges(baselineSdl: string, currentSdl: string, now = Date.now()): Promise<ContractChange[]> {
  const before = buildSchema(baselineSdl);
  const after = buildSchema(currentSdl);
  const exemptionOf = exemptions(before, now);
  const changes = (await diff(before, after)).map((change): ContractChange => {
    const kind = kindOf(change);
    const where = change.path ?? change.type;
    const exemption = kind === 'breaking' ? exemptionOf(where) : undefined;
    return { contract: 'GraphQL', kind, where, message: change.message, ...(exemption ? { exemption } : {}) };
  });
  return [...changes, ...deprecationNoticeBreaches(before, after, now)];
}

function kindOf(change: Change): ChangeKind {
  switch (change.criticality.level) {
    case CriticalityLevel.Breaking:
      return 'breaking';
    case CriticalityLevel.Dangerous:
      return 'dangerous';
    default:
      return /DESCRIPTION/.test(change.type) ? 'annotation' : 'addition';
  }
}

/** Every element a deprecation can sit on, by schema coordinate, with its deprecation reason if any. */
function deprecations(schema: GraphQLSchema): Map<string, string> {
  const found = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type)) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (field.deprecationReason) found.set(`${type.name}.${field.name}`, field.deprecationReason);
        for (const arg of field.args) {
          if (arg.deprecationReason) found.set(`${type.name}.${field.name}.${arg.name}`, arg.deprecationReason);
        }
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (field.deprecationReason) found.set(`${type.name}.${field.name}`, field.deprecationReason);
      }
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) {
        if (value.deprecationReason) found.set(`${type.name}.${value.name}`, value.deprecationReason);
      }
    }
  }
  return found;
}

/** Fields marked @stability(level: …), by coordinate. */
function stabilityLevels(schema: GraphQLSchema): Map<string, string> {
  const found = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(isObjectType(type) || isInterfaceType(type)) || isIntrospectionType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const directive = field.astNode?.directives?.find((node) => node.name.value === 'stability');
      const level = directive?.arguments?.find((arg) => arg.name.value === 'level')?.value;
      if (level?.kind === 'EnumValue') found.set(`${type.name}.${field.name}`, level.value);
    }
  }
  return found;
}

/** Who refers to each named type: the coordinates of the fields, arguments, members and implementers. */
function references(schema: GraphQLSchema): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const add = (typeName: string, from: string) => found.set(typeName, [...(found.get(typeName) ?? []), from]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type)) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        add(getNamedType(field.type).name, `${type.name}.${field.name}`);
        for (const arg of field.args) add(getNamedType(arg.type).name, `${type.name}.${field.name}.${arg.name}`);
      }
      for (const implemented of type.getInterfaces()) add(implemented.name, type.name);
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) add(getNamedType(field.type).name, `${type.name}.${field.name}`);
    } else if (isUnionType(type)) {
      for (const member of type.getTypes()) add(member.name, type.name);
    }
  }
  return found;
}

/**
 * What lets a breaking change at a path (a coordinate such as `Query.pets`,
 * `Query.pets.filter`, `PetStatus.SOLD`, or a type name) through, if anything.
 */
function exemptions(baseline: GraphQLSchema, now: number): (path: string) => Exemption | undefined {
  const deprecated = deprecations(baseline);
  const levels = stabilityLevels(baseline);
  const referrers = references(baseline);
  const roots = new Set([baseline.getQueryType(), baseline.getMutationType(), baseline.getSubscriptionType()].map((type) => type?.name));

  const ofElement = (coordinate: string): Exemption | undefined => {
    const reason = deprecated.get(coordinate);
    const sunsetDate = sunsetDateIn(reason);
    if (sunsetDate !== undefined && sunsetHasPassed(sunsetDate, now)) return { reason: 'retired', element: coordinate, sunsetDate };
    const level = levels.get(coordinate);
    return level ? { reason: 'unstable', element: coordinate, level } : undefined;
  };

  // A type that only exempt elements lead to is exempt with them (a retired field's own result type, say).
  const typeExemptions = new Map<string, Exemption | undefined>();
  const ofType = (typeName: string): Exemption | undefined => {
    if (typeExemptions.has(typeName)) return typeExemptions.get(typeName);
    typeExemptions.set(typeName, undefined); // a cycle alone exempts nothing
    const from = referrers.get(typeName) ?? [];
    if (roots.has(typeName) || from.length === 0) return undefined;
    const found = from.map((coordinate) => ofPath(coordinate));
    if (found.some((exemption) => exemption === undefined)) return undefined;
    const exemption = found.find((candidate) => candidate?.reason === 'retired') ?? found[0];
    typeExemptions.set(typeName, exemption);
    return exemption;
  };

  const ofPath = (path: string): Exemption | undefined => {
    const parts = path.split('.');
    for (let length = parts.length; length >= 2; length--) {
      const exemption = ofElement(parts.slice(0, length).join('.'));
      if (exemption) return exemption;
    }
    return ofType(parts[0]!);
  };
  return ofPath;
}

/** Deprecations new since the baseline must name a sunset date far enough ahead. */
function deprecationNoticeBreaches(before: GraphQLSchema, after: GraphQLSchema, now: number): ContractChange[] {
  const released = deprecations(before);
  const breaches: ContractChange[] = [];
  for (const [coordinate, reason] of deprecations(after)) {
    if (released.has(coordinate)) continue;
    const problem = deprecationNoticeProblem(coordinate, sunsetDateIn(reason), now);
    if (problem) breaches.push({ contract: 'GraphQL', kind: 'breaking', where: coordinate, message: problem });
  }
  return breaches;
}
