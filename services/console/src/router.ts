import { useEffect, useState } from 'react';

/**
 * Pages are addressed by the URL's fragment (`#/customers/cust_...`), so the gateway serves one
 * index.html and the key never travels in a path or query the server would log.
 */
export type Route =
  | { page: 'customers' }
  | { page: 'customer'; id: string }
  | { page: 'invoices' }
  | { page: 'invoice'; id: string }
  | { page: 'plans' }
  | { page: 'plan'; id: string }
  | { page: 'api-keys' }
  | { page: 'webhooks' }
  | { page: 'webhook'; id: string }
  | { page: 'meters' }
  | { page: 'meter'; id: string }
  | { page: 'events' }
  | { page: 'tax-rates' }
  | { page: 'overview' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'customers' && parts[1]) return { page: 'customer', id: parts[1] };
  if (parts[0] === 'invoices' && parts[1]) return { page: 'invoice', id: parts[1] };
  if (parts[0] === 'invoices') return { page: 'invoices' };
  if (parts[0] === 'plans' && parts[1]) return { page: 'plan', id: parts[1] };
  if (parts[0] === 'plans') return { page: 'plans' };
  if (parts[0] === 'api-keys') return { page: 'api-keys' };
  if (parts[0] === 'webhooks' && parts[1]) return { page: 'webhook', id: parts[1] };
  if (parts[0] === 'webhooks') return { page: 'webhooks' };
  if (parts[0] === 'meters' && parts[1]) return { page: 'meter', id: parts[1] };
  if (parts[0] === 'meters') return { page: 'meters' };
  if (parts[0] === 'events') return { page: 'events' };
  if (parts[0] === 'overview') return { page: 'overview' };
  if (parts[0] === 'tax-rates') return { page: 'tax-rates' };
  return { page: 'customers' };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'customers':
      return '#/customers';
    case 'customer':
      return `#/customers/${encodeURIComponent(route.id)}`;
    case 'invoices':
      return '#/invoices';
    case 'invoice':
      return `#/invoices/${encodeURIComponent(route.id)}`;
    case 'plans':
      return '#/plans';
    case 'plan':
      return `#/plans/${encodeURIComponent(route.id)}`;
    case 'api-keys':
      return '#/api-keys';
    case 'webhooks':
      return '#/webhooks';
    case 'webhook':
      return `#/webhooks/${encodeURIComponent(route.id)}`;
    case 'meters':
      return '#/meters';
    case 'meter':
      return `#/meters/${encodeURIComponent(route.id)}`;
    case 'events':
      return '#/events';
    case 'overview':
      return '#/overview';
    case 'tax-rates':
      return '#/tax-rates';
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
