import { describe, expect, it } from '@jest/globals';
import { render, screen } from '@testing-library/react';
import type { Api } from './api';
import { NameLink, useNames } from './names';

function fakeApi(records: Record<string, { name?: string | null; external_id?: string }>): Api & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    get: async <T,>(path: string) => {
      calls.push(path);
      const found = records[path];
      if (!found) throw new Error('not found');
      return found as T;
    },
  } as unknown as Api & { calls: string[] };
}

function Names({ api, ids }: { api: Api; ids: string[] }) {
  const names = useNames(api, 'customers', ids);
  return (
    <ul>
      {ids.map((id, n) => (
        <li key={n}>
          <NameLink kind="customers" id={id} names={names} />
        </li>
      ))}
    </ul>
  );
}

describe('names where the API answers ids', () => {
  it('shows a customer by its name (else its external id), each id read once; an unreadable one stays its id', async () => {
    const api = fakeApi({ '/v1/customers/cus_1': { name: 'Globex <b>Ltd</b>', external_id: 'globex' }, '/v1/customers/cus_2': { name: null, external_id: 'initech' } });
    render(<Names api={api} ids={['cus_1', 'cus_2', 'cus_1', 'cus_gone']} />);
    expect((await screen.findAllByRole('link', { name: 'Globex <b>Ltd</b>' })).map((a) => a.getAttribute('href'))).toEqual(['#/customers/cus_1', '#/customers/cus_1']);
    expect(screen.getByRole('link', { name: 'initech' }).getAttribute('title')).toBe('cus_2');
    expect(screen.getByRole('link', { name: 'cus_gone' })).toBeTruthy();
    expect(document.querySelector('b')).toBeNull();
    expect([...api.calls].sort()).toEqual(['/v1/customers/cus_1', '/v1/customers/cus_2', '/v1/customers/cus_gone']);
  });
});
