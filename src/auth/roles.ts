/** The built-in roles seeded in migrations/0001_seed.sql, by id (as Unleash numbers them). */
export const VIEWER_ROLE_ID = 3;
export const OWNER_ROLE_ID = 4;
