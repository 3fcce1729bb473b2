import { type Compilable, CompiledQuery } from "kysely";

/**
 * A query built and compiled by Kysely once, then run many times with new arguments: building and
 * compiling a query for every device message was a quarter of a saturated server's time. The
 * query is built with a marker in place of each argument; the compiled parameters are then the
 * markers (replaced by the arguments at each run) and constants.
 */
export function prepare<Name extends string>(
  names: readonly Name[],
  build: (args: Record<Name, never>) => Compilable,
): (args: Record<Name, unknown>) => CompiledQuery {
  const { sql, slots } = template(names, build);
  return (args) =>
    CompiledQuery.raw(
      sql,
      slots.map((slot) => (slot.name === null ? slot.constant : args[slot.name as Name])),
    );
}

function template<Name extends string>(
  names: readonly Name[],
  build: (args: Record<Name, never>) => Compilable,
): { sql: string; slots: { name: string | null; constant: unknown }[] } {
  const markers = Object.fromEntries(names.map((name) => [name, `${markerPrefix}${name}`]));
  const compiled = build(markers as Record<Name, never>).compile();
  const slots = compiled.parameters.map((p) =>
    typeof p === "string" && p.startsWith(markerPrefix)
      ? { name: p.slice(markerPrefix.length), constant: undefined }
      : { name: null, constant: p },
  );
  return { sql: compiled.sql, slots };
}

/**
 * A multi-row insert of `size` rows prepared once per size. `run` splits any number of rows into
 * chunks of the sizes prepared (a power of two, at most `maxRows`), so only a few statements exist.
 */
export function prepareRows<Row extends Record<string, unknown>>(
  columns: readonly (keyof Row & string)[],
  build: (rows: Row[]) => Compilable,
  maxRows = 256,
): (rows: readonly Row[]) => CompiledQuery[] {
  /** Per size: the SQL, and for each parameter the row offset and column it takes, or a constant. */
  const bySize = new Map<
    number,
    { sql: string; slots: { row: number; column: string | null; constant: unknown }[] }
  >();
  const forSize = (size: number) => {
    let prepared = bySize.get(size);
    if (!prepared) {
      const names = Array.from({ length: size }, (_, i) => columns.map((c) => `${i}.${c}`)).flat();
      const t = template(names, (args) =>
        build(
          Array.from(
            { length: size },
            (_, i) => Object.fromEntries(columns.map((c) => [c, args[`${i}.${c}`]])) as Row,
          ),
        ),
      );
      prepared = {
        sql: t.sql,
        slots: t.slots.map((slot) => {
          if (slot.name === null) return { row: 0, column: null, constant: slot.constant };
          const dot = slot.name.indexOf(".");
          return {
            row: Number(slot.name.slice(0, dot)),
            column: slot.name.slice(dot + 1),
            constant: undefined,
          };
        }),
      };
      bySize.set(size, prepared);
    }
    return prepared;
  };
  return (rows) => {
    const queries: CompiledQuery[] = [];
    let start = 0;
    while (start < rows.length) {
      const left = rows.length - start;
      let size = maxRows;
      while (size > left) size >>= 1;
      const { sql, slots } = forSize(size);
      const at = start;
      queries.push(
        CompiledQuery.raw(
          sql,
          slots.map((slot) => (slot.column === null ? slot.constant : rows[at + slot.row]![slot.column])),
        ),
      );
      start += size;
    }
    return queries;
  };
}

const markerPrefix = "\u0000arg:";
