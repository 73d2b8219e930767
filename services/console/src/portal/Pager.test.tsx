import { describe, expect, it, jest } from '@jest/globals';
import { fireEvent, render, screen } from '@testing-library/react';
import { Pager } from './Pager';

const page = (count: number, total: number, offset: number) => ({ items: Array.from({ length: count }, (_, i) => i), pagination: { total, limit: 50, offset } });

describe('the portal pager', () => {
  it('says where the page is and moves by a page; the ends are disabled', () => {
    const onOffset = jest.fn();
    const { rerender } = render(<Pager page={page(50, 120, 50)} label="invoices" onOffset={onOffset} />);
    expect(screen.getByRole('status').textContent).toBe('51–100 of 120');
    fireEvent.click(screen.getByRole('button', { name: 'Next invoices' }));
    fireEvent.click(screen.getByRole('button', { name: 'Previous invoices' }));
    expect(onOffset.mock.calls).toEqual([[100], [0]]);
    rerender(<Pager page={page(20, 120, 100)} label="invoices" onOffset={onOffset} />);
    expect(screen.getByRole('status').textContent).toBe('101–120 of 120');
    expect((screen.getByRole('button', { name: 'Next invoices' }) as HTMLButtonElement).disabled).toBe(true);
    rerender(<Pager page={page(50, 120, 0)} label="invoices" onOffset={onOffset} />);
    expect((screen.getByRole('button', { name: 'Previous invoices' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows nothing when one page holds the list', () => {
    const { container } = render(<Pager page={page(3, 3, 0)} label="holds" onOffset={() => undefined} />);
    expect(container.innerHTML).toBe('');
  });
});
