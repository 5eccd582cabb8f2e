import SchemaBuilder, {
  BasePlugin,
  createInputValueMapper,
  type FieldRequiredness,
  InputFieldBuilder,
  type InputFieldsMapping,
  type InputOrArgRef,
  type InputShapeFromTypeParam,
  type inputShapeKey,
  mapInputFields,
  type PothosOutputFieldConfig,
  type SchemaTypes,
} from '@pothos/core';
import { parseId } from '../domain/ids.js';

/**
 * Ids here are PostgreSQL bigints that travel as GraphQL `ID` strings. An
 * argument or input field declared with `t.arg.int64Id()` / `t.int64Id()` is
 * an `ID` in the schema and arrives in the resolver already parsed, as a
 * bigint: anything that is not a whole number from 1 to 2^63-1 is refused with
 * VALIDATION_FAILED naming the argument or field (src/domain/ids.ts), before
 * the resolver runs. One way in for every id, declared where the id is.
 */

interface Int64IdShape {
  [inputShapeKey]: bigint;
}

type Int64IdOptions<Types extends SchemaTypes, Req extends FieldRequiredness<'ID'>, Kind extends 'Arg' | 'InputObject'> = Omit<
  PothosSchemaTypes.InputFieldOptionsByKind<Types, 'ID', Req>[Kind],
  'type'
>;

const inputFieldBuilder = InputFieldBuilder.prototype as PothosSchemaTypes.InputFieldBuilder<SchemaTypes, 'Arg'>;

inputFieldBuilder.int64Id = function int64Id(options = {}) {
  return this.id({ ...options, extensions: { ...options.extensions, int64Id: true } } as never) as never;
};

export class Int64IdPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  private readonly mappingCache = new Map<string, Map<string, never>>();

  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const mappings = mapInputFields(
      fieldConfig.args,
      this.buildCache,
      (field) => (field.extensions?.int64Id ? true : null),
      this.mappingCache as never,
    ) as InputFieldsMapping<Types, true> | null;
    if (!mappings) return fieldConfig;
    const parseIds = createInputValueMapper(mappings, (value, mapping) =>
      parseId(value as string | number, mapping.config.name),
    );
    return { ...fieldConfig, argMappers: [...(fieldConfig.argMappers ?? []), (args) => parseIds(args)] };
  }
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Pothos registers plugins by merging into its namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      int64Ids: Int64IdPlugin<Types>;
    }
    export interface InputFieldBuilder<Types extends SchemaTypes, Kind extends 'Arg' | 'InputObject'> {
      /** An `ID` argument or input field that arrives parsed as a bigint (an int64 id). */
      int64Id: <Req extends FieldRequiredness<'ID'>>(
        options?: Int64IdOptions<Types, Req, Kind>,
      ) => InputOrArgRef<Types, InputShapeFromTypeParam<Types, Int64IdShape, Req>, Kind>;
    }
  }
}


SchemaBuilder.registerPlugin('int64Ids', Int64IdPlugin);
