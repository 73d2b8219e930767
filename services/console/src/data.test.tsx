import { describe, expect, it, jest } from '@jest/globals';
import { fireEvent, render, screen } from '@testing-library/react';
import { ApiError } from './api';
import { ErrorNote, Pager } from './data';

describe('Pager', () => {
  it('shows the page the server answered and moves by one page', () => {
    const onOffset = jest.fn();
    render(<Pager total={45} limit={20} offset={20} onOffset={onOffset} />);
    expect(screen.getByText('21–40 of 45')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    fireEvent.click(screen.getByRole('button', { name: 'Previous' }));
    expect(onOffset.mock.calls).toEqual([[40], [0]]);
  });

  it('cannot move before the first or past the last page', () => {
    render(<Pager total={5} limit={20} offset={0} onOffset={() => undefined} />);
    expect((screen.getByRole('button', { name: 'Previous' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('ErrorNote', () => {
  it("renders the API's message as text with the field it names", () => {
    render(<ErrorNote error={new ApiError('<img src=x onerror=alert(1)> is not valid', 400, 'email', { field: 'email' })} />);
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toBe('<img src=x onerror=alert(1)> is not valid (field: email)');
    expect(alert.querySelector('img')).toBeNull();
  });
});
