import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { BREAK, validate, visit, type DocumentNode, type ValidationRule } from 'graphql';

/**
 * @defer and @stream (yoga's plugin), with one rule for fields that cannot be merged.
 *
 * The plugin brings its own copy of graphql-js's overlapping-fields rule, one that also refuses two
 * fields of one name streamed differently, and means it to replace graphql-js's; but it filters a copy
 * of the rules, so both ran and every conflict was told twice. Its copy is also older than the work
 * budget graphql-js's rule keeps (a thousand fields of one name are refused, not compared pair by
 * pair). So graphql-js's rule stays, and the plugin's runs after it only for a document that streams,
 * only when graphql-js's found nothing: the one conflict it alone can see is told once.
 */
export function useIncrementalDelivery(): ReturnType<typeof useDeferStream> {
  const deferStream = useDeferStream();
  return {
    ...deferStream,
    onValidate(payload) {
      let streamedFieldsRule: ValidationRule | undefined;
      const addValidationRule = (rule: ValidationRule) => {
        if (rule.name === 'OverlappingFieldsCanBeMergedRule') streamedFieldsRule = rule;
        else payload.addValidationRule(rule);
      };
      void deferStream.onValidate?.({ ...payload, params: { ...payload.params }, addValidationRule });
      const { schema, documentAST } = payload.params;
      if (!streamedFieldsRule || !streams(documentAST)) return;
      const rule = streamedFieldsRule;
      return ({ valid, setResult }) => {
        if (!valid) return;
        const errors = validate(schema, documentAST, [rule]);
        if (errors.length > 0) setResult([...errors]);
      };
    },
  };
}

function streams(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'stream') return;
      found = true;
      return BREAK;
    },
  });
  return found;
}
