/**
 * A parsed SCIM filter -> a SQL condition over the attributes a resource maps to columns.
 * Strings that SCIM compares case-insensitively (RFC 7643: `caseExact: false`, e.g. userName)
 * are compared lowercased; `co`/`sw`/`ew` are LIKE patterns with the value's own `%`, `_` and
 * `\` escaped. An attribute or operator the resource does not support is a 400 invalidFilter.
 */
import { sql, type SQL } from 'drizzle-orm';
import { invalidFilter } from './errors';
import { holdsFor, type Filter, type FilterValue } from './filter';

export interface FilterColumn {
  /** The column (or expression) holding the attribute. */
  expr: SQL;
  type: 'string' | 'boolean';
  caseExact?: boolean;
  /** For a multi-valued attribute we hold one value of: that value's sub-attributes, for `attr[...]` filters. */
  single?: Readonly<Record<string, FilterValue>>;
}

export interface FilterColumns {
  readonly columns: Readonly<Record<string, FilterColumn>>;
  /** `attr[filter]` over a multi-valued attribute held in another table (a group's members). */
  some?: (attribute: string, filter: Filter) => SQL;
}

const TRUE = sql`1 = 1`;
const FALSE = sql`1 = 0`;

function likePattern(value: string, op: 'co' | 'sw' | 'ew'): string {
  const escaped = value.replace(/[\\%_]/g, (char) => `\\${char}`);
  return op === 'co' ? `%${escaped}%` : op === 'sw' ? `${escaped}%` : `%${escaped}`;
}

function columnOf(spec: FilterColumns, path: string, where: Filter | undefined): { column: FilterColumn; matches: boolean } {
  const column = Object.hasOwn(spec.columns, path) ? spec.columns[path] : undefined;
  if (column === undefined) throw invalidFilter(`Filtering on "${path.slice(0, 100)}" is not supported.`);
  if (where === undefined) return { column, matches: true };
  if (column.single === undefined) throw invalidFilter(`"${path.slice(0, 100)}" takes no value filter.`);
  return { column, matches: holdsFor(where, column.single) };
}

function compareString(column: FilterColumn, op: string, value: FilterValue): SQL {
  if (typeof value !== 'string') throw invalidFilter(`Compare this attribute with a quoted string.`);
  const exact = column.caseExact === true;
  const left = exact ? column.expr : sql`lower(${column.expr})`;
  const right = exact ? value : value.toLowerCase();
  switch (op) {
    case 'eq':
      return sql`${left} = ${right}`;
    case 'ne':
      return sql`(${column.expr} IS NULL OR ${left} <> ${right})`;
    case 'co':
    case 'sw':
    case 'ew':
      return sql`${left} LIKE ${likePattern(right, op)} ESCAPE '\\'`;
    case 'gt':
      return sql`${left} > ${right}`;
    case 'ge':
      return sql`${left} >= ${right}`;
    case 'lt':
      return sql`${left} < ${right}`;
    default:
      return sql`${left} <= ${right}`;
  }
}

function compareBoolean(column: FilterColumn, op: string, value: FilterValue): SQL {
  const wanted = typeof value === 'string' ? value.toLowerCase() : value;
  if ((wanted !== true && wanted !== false && wanted !== 'true' && wanted !== 'false') || (op !== 'eq' && op !== 'ne')) {
    throw invalidFilter('A boolean attribute takes only "eq" or "ne" with true or false.');
  }
  const isTrue = (wanted === true || wanted === 'true') === (op === 'eq');
  return isTrue ? sql`(${column.expr}) = 1` : sql`(${column.expr}) = 0`;
}

/** The SQL condition of a filter. */
export function filterSql(filter: Filter, spec: FilterColumns): SQL {
  switch (filter.kind) {
    case 'and':
      return sql`(${filterSql(filter.left, spec)} AND ${filterSql(filter.right, spec)})`;
    case 'or':
      return sql`(${filterSql(filter.left, spec)} OR ${filterSql(filter.right, spec)})`;
    case 'not':
      return sql`NOT (${filterSql(filter.filter, spec)})`;
    case 'some':
      if (spec.some === undefined) throw invalidFilter(`Filtering on "${filter.attribute.slice(0, 100)}" is not supported.`);
      return spec.some(filter.attribute, filter.filter);
    case 'present': {
      const { column, matches } = columnOf(spec, filter.path, filter.where);
      if (!matches) return FALSE;
      return column.type === 'boolean' ? TRUE : sql`(${column.expr} IS NOT NULL AND ${column.expr} <> '')`;
    }
    case 'compare': {
      const { column, matches } = columnOf(spec, filter.path, filter.where);
      if (!matches) return filter.op === 'ne' ? TRUE : FALSE;
      return column.type === 'boolean' ? compareBoolean(column, filter.op, filter.value) : compareString(column, filter.op, filter.value);
    }
  }
}
