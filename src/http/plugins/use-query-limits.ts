import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { getNamedType, GraphQLError, isIntrospectionType, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Limits } from '../../config.js';

/**
 * Query limits (graphql-armor: depth, aliases, tokens, directives), checked while the document is validated, so a
 * document over a limit is refused before any resolver runs. With
 * introspection off, `__type` and `__schema` (but for its description) are
 * refused and field suggestions ("did you mean …") are hidden.
 */
export function useQueryLimits(limits: Limits, introspection: boolean): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        EnvelopArmorPlugin({
          maxDepth: { n: limits.maxDepth, ignoreIntrospection: true, flattenFragments: true },
          maxAliases: { n: limits.maxAliases, allowList: [] },
          maxTokens: { n: limits.maxTokens },
          maxDirectives: { n: limits.maxDirectives },
          // Cost is the GraphQL Cost Directives' (useDemandControl), which reads the variables too.
          costLimit: { enabled: false },
          blockFieldSuggestion: { enabled: !introspection },
        }),
      );
    },
    onValidate: ({ addValidationRule }) => {
      if (!introspection) addValidationRule(NoSchemaIntrospectionButItsDescription);
    },
  };
}

/**
 * graphql-js' NoSchemaIntrospectionCustomRule, but for `__schema` itself: the
 * schema's description, which names the contract's version, tells nothing of
 * its shape, and clients need it as they need `__typename`. Every other field
 * of __Schema is of an introspection type (__Type, __Directive), so this
 * refuses `__schema { types { name } }` as before, fragments included.
 */
const NoSchemaIntrospectionButItsDescription: ValidationRule = (context) => ({
  Field(node) {
    const type = getNamedType(context.getType());
    if (type && isIntrospectionType(type) && node.name.value !== '__schema') {
      context.reportError(
        new GraphQLError(
          `GraphQL introspection has been disabled, but the requested query contained the field "${node.name.value}".`,
          { nodes: node },
        ),
      );
    }
  },
});
