import type { ReactNode } from 'react';
import type { Page } from './api';
import { Loaded, Pager, type Load } from './data';

/** A column of a list: its header and what a row shows in it (rendered as text by React). */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/** A table of rows (named `label` for assistive technology), or `empty` when there are none. */
export function ListTable<T extends { id: string }>({ rows, columns, empty, label }: { rows: T[]; columns: Column<T>[]; empty: string; label?: string }) {
  if (rows.length === 0) return <p>{empty}</p>;
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            {columns.map((c) => (
              <td key={c.header}>{c.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A server page of rows as a table, with the buttons that move between pages. */
export function PagedTable<T extends { id: string }>({ load, columns, empty, label, onOffset }: { load: Load<Page<T>>; columns: Column<T>[]; empty: string; label?: string; onOffset: (offset: number) => void }) {
  return (
    <Loaded load={load}>
      {(page) => (
        <>
          <ListTable rows={page.items} columns={columns} empty={empty} label={label} />
          <Pager {...page.pagination} onOffset={onOffset} />
        </>
      )}
    </Loaded>
  );
}

/**
 * A filter of a list by one of a few values (`''`: any); changing it is the caller's to say
 * (a list goes back to its first page).
 */
export function ChoiceFilter<V extends string>({ label, value, choices, onChange }: { label: string; value: V; choices: ReadonlyArray<readonly [V, string]>; onChange: (value: V) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value as V)}>
        {choices.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The choices of a filter whose values are shown as they are, `''` as "any". */
export const plainChoices = <V extends string>(values: readonly V[]): Array<readonly [V, string]> => values.map((v) => [v, v || 'any'] as const);
