/**
 * The legacy single-pet lookup (GraphQL `getPetById`, REST `GET /pets/{petId}`)
 * goes away on this date unless LEGACY_SUNSET_DATE says otherwise.
 */
export const DEFAULT_LEGACY_SUNSET_DATE = '2027-06-30';
