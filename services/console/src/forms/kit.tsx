import { useCallback, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import type { RouteDef } from '@billstream/contracts';
import type { Api } from '../api';
import { apiErrors, NO_ERRORS, schemaErrors, withKey, type FormErrors } from './issues';

/**
 * The form kit of the support actions (issue #33, ADR 0050 "The forms"): a form sends one
 * route of libs/contracts, validated first with that route's own body schema, so the console
 * and the API cannot disagree about what is valid. One idempotency key is made when the form
 * opens and kept across retries; only a success makes a new one (closing the form forgets it).
 * While a request is in flight the form sends nothing else.
 */
export type Values = Record<string, string>;

/** A random idempotency key; `crypto.getRandomValues` works on plain http too (randomUUID needs a secure context). */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The route's path with its parameters filled in: `/v1/wallets/:id/topup` -> `/v1/wallets/w_1/topup`. */
export function pathOf(route: RouteDef, params: Record<string, string> = {}): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.operationId}: no value for :${name}`);
    return encodeURIComponent(value);
  });
}

/** The values a person typed, without the empty ones (an optional field left empty is absent). */
export function filled(values: Values): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));
}

export interface Send {
  route: RouteDef;
  params?: Record<string, string>;
  body: unknown;
  /** Send the form's idempotency key (default true); a preview sends none and keeps it. */
  idempotent?: boolean;
}

export interface Submitter {
  errors: FormErrors;
  busy: boolean;
  /** Validates and sends; null when invalid, refused by the API, or another send is in flight. */
  send<T>(request: Send): Promise<{ result: T } | null>;
}

/** The state behind a form: its key, its in-flight guard and its errors, for the fields named. */
export function useSubmitter(api: Api, fields: readonly string[]): Submitter {
  // The key of this form until a success: made once when it opens, kept across re-renders and retries.
  const [firstKey] = useState(newIdempotencyKey);
  const key = useRef(firstKey);
  const inFlight = useRef(false);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const send = useCallback(
    async <T,>({ route, params, body, idempotent = true }: Send): Promise<{ result: T } | null> => {
      if (inFlight.current) return null;
      if (route.method !== 'post' && route.method !== 'put') throw new Error(`${route.operationId}: the forms send POST and PUT routes only`);
      // A PUT replaces what it names, the same on a retry: it takes no idempotency key.
      const sentKey = idempotent && route.method === 'post' ? key.current : undefined;
      const invalid = route.body ? schemaErrors(route.body, withKey(route.body, body, sentKey), fields) : null;
      if (invalid) {
        setErrors(invalid);
        return null;
      }
      inFlight.current = true;
      setBusy(true);
      setErrors(NO_ERRORS);
      try {
        const result = route.method === 'put' ? await api.put<T>(pathOf(route, params), body) : await api.post<T>(pathOf(route, params), body, sentKey);
        if (sentKey) key.current = newIdempotencyKey();
        return { result };
      } catch (err) {
        setErrors(apiErrors(err, fields));
        return null;
      } finally {
        inFlight.current = false;
        setBusy(false);
      }
    },
    [api, fields.join('\n')],
  );
  return { errors, busy, send };
}

export interface FieldDef {
  name: string;
  label: string;
  kind?: 'text' | 'email' | 'select' | 'textarea';
  options?: ReadonlyArray<string | { value: string; label: string }>;
  hint?: string;
  placeholder?: string;
}

/** One labelled input with its hint and its error, tied by aria-describedby. */
export function Field({ def, value, error, onChange }: { def: FieldDef; value: string; error?: string; onChange: (value: string) => void }) {
  const id = useId();
  const described = [def.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name: def.name, value, 'aria-invalid': error ? true : undefined, 'aria-describedby': described };
  return (
    <div className="field">
      <label htmlFor={id}>{def.label}</label>
      {def.kind === 'select' ? (
        <select {...common} onChange={(e) => onChange(e.target.value)}>
          {(def.options ?? []).map((o) => {
            const { value: v, label } = typeof o === 'string' ? { value: o, label: o || '–' } : o;
            return (
              <option key={v} value={v}>
                {label}
              </option>
            );
          })}
        </select>
      ) : def.kind === 'textarea' ? (
        <textarea {...common} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input {...common} type={def.kind === 'email' ? 'email' : 'text'} placeholder={def.placeholder} autoComplete="off" onChange={(e) => onChange(e.target.value)} />
      )}
      {def.hint && (
        <span id={`${id}-hint`} className="hint">
          {def.hint}
        </span>
      )}
      {error && (
        <span id={`${id}-error`} className="error">
          {error}
        </span>
      )}
    </div>
  );
}

/** The message that names no field of the form, at its top. */
export function FormError({ errors }: { errors: FormErrors }) {
  return errors.form ? (
    <p role="alert" className="error">
      {errors.form}
    </p>
  ) : null;
}

export interface ActionFormProps<T> {
  api: Api;
  /** The form's accessible name, shown as its heading. */
  title: string;
  route: RouteDef;
  params?: Record<string, string>;
  fields: FieldDef[];
  initial?: Values;
  /** The body sent for the values typed (default: the filled values as they are). */
  body?: (values: Values) => unknown;
  submitLabel: string;
  onDone: (result: T) => void;
  onCancel?: () => void;
  children?: ReactNode;
}

/** A form that sends one route: fields, the schema's and the API's messages, one key, one request at a time. */
export function ActionForm<T>({ api, title, route, params, fields, initial = {}, body = filled, submitLabel, onDone, onCancel, children }: ActionFormProps<T>) {
  const names = fields.map((f) => f.name);
  const [values, setValues] = useState<Values>(() => Object.fromEntries(fields.map((f) => [f.name, initial[f.name] ?? ''])));
  const submitter = useSubmitter(api, names);
  const titleId = useId();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const sent = await submitter.send<T>({ route, params, body: body(values) });
    if (sent) onDone(sent.result);
  };
  return (
    <form className="action" aria-labelledby={titleId} onSubmit={submit} noValidate>
      <h3 id={titleId}>{title}</h3>
      <FormError errors={submitter.errors} />
      {children}
      {fields.map((def) => (
        <Field key={def.name} def={def} value={values[def.name] ?? ''} error={submitter.errors.fields[def.name]} onChange={(v) => setValues((old) => ({ ...old, [def.name]: v }))} />
      ))}
      <div className="buttons">
        <button type="submit" disabled={submitter.busy} aria-busy={submitter.busy || undefined}>
          {submitter.busy ? 'Sending…' : submitLabel}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
