import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { OverlappingFieldsCanBeMergedRule, type ValidationRule } from 'graphql';

/**
 * @defer and @stream (yoga's plugin), with one rule for fields that cannot be merged. The plugin
 * brings its own version of that rule, one that knows the two directives, and means to take
 * graphql-js's out; but it filters a copy of the rules, so both ran and every conflict was told
 * twice. The rule is taken out of the rules that are run.
 */
export function useIncrementalDelivery(): ReturnType<typeof useDeferStream> {
  const deferStream = useDeferStream();
  return {
    ...deferStream,
    onValidate(payload) {
      const rules = payload.params.rules as ValidationRule[] | undefined;
      const after = deferStream.onValidate?.(payload);
      const standard = rules?.indexOf(OverlappingFieldsCanBeMergedRule) ?? -1;
      if (standard >= 0) rules?.splice(standard, 1);
      return after;
    },
  };
}
