import { useEffect, useState } from 'react';
import { createApi, type Api } from '../api';

/** One read of the portal API: its data, or the error's message, or loading. */
export function useRead<T>(api: Api, path: string): { data?: T; error?: string; status?: number } {
  const [state, setState] = useState<{ data?: T; error?: string; status?: number }>({});
  useEffect(() => {
    let live = true;
    setState({});
    api.get<T>(path).then(
      (data) => live && setState({ data }),
      (err: { message?: string; status?: number }) => live && setState({ error: err.message ?? 'The portal could not load this page', status: err.status }),
    );
    return () => {
      live = false;
    };
  }, [api, path]);
  return state;
}

/** The portal API with the session's token (the console's client: `Authorization: Bearer`, no cookie). */
export const portalApi = (token: string): Api => createApi(token);

/** The page of the fragment (`#/invoices`), the invoices when none is named. */
export function useRoute(): string {
  const read = () => /^#\/([a-z_]+)/.exec(window.location.hash)?.[1] ?? 'invoices';
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}
