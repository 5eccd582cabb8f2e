import type { StabilityLevel } from '../builder.js';
import { validationFailed } from '../errors.js';

/** Page sizes of every connection: 20 unless asked, never more than 100. */
export const pageSize = { default: 20, max: 100 } as const;

interface PageArgs {
  first?: number | null;
  last?: number | null;
}

/** More than the maximum page is refused, not silently cut short. */
export function checkPageSize(args: PageArgs): void {
  for (const field of ['first', 'last'] as const) {
    const value = args[field];
    if (value === null || value === undefined) continue;
    if (value < 0 || value > pageSize.max) {
      throw validationFailed(field, `${field} must be between 0 and ${pageSize.max}, got ${value}.`);
    }
  }
}

const stabilityWord: Record<StabilityLevel, string> = { BETA: 'BETA', EXPERIMENTAL: 'EXPERIMENTAL' };

/**
 * The options that mark a field's stability: the `@stability` directive for
 * tools, and the same word leading the description for people in GraphiQL.
 */
export function stability(level: StabilityLevel, description: string) {
  return {
    description: `${stabilityWord[level]}: ${description}`,
    directives: { stability: { level } },
  } as const;
}
