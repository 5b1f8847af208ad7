/** The built-in roles seeded in migrations/0001_seed.sql, by id (as Unleash numbers them). */
export const ADMIN_ROLE_ID = 1;
export const EDITOR_ROLE_ID = 2;
export const VIEWER_ROLE_ID = 3;
export const OWNER_ROLE_ID = 4;
export const MEMBER_ROLE_ID = 5;
