import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Limits } from '../../config.js';

/**
 * Query limits (graphql-armor), checked while the document is validated, so a
 * document over a limit is refused before any resolver runs. With
 * introspection off, `__schema`/`__type` are refused and field suggestions
 * ("did you mean …") are hidden.
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
          costLimit: { maxCost: limits.maxCost, ignoreIntrospection: true },
          blockFieldSuggestion: { enabled: !introspection },
        }),
      );
    },
    onValidate: ({ addValidationRule }) => {
      if (!introspection) addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}
