import { describe, expect, it } from '@jest/globals';
import { tabStorage } from './token';

describe('where the portal keeps its token', () => {
  it("the tab's sessionStorage when the browser allows it, else memory (a frame whose third-party storage is blocked)", () => {
    expect(tabStorage(window)).toBe(window.sessionStorage);
    const denied = {
      get sessionStorage(): Storage {
        throw new DOMException("Failed to read the 'sessionStorage' property from 'Window': Access is denied for this document.", 'SecurityError');
      },
    };
    const memory = tabStorage(denied);
    expect(memory.getItem('billstream.portal.token')).toBeNull();
    memory.setItem('billstream.portal.token', 'bsp_x');
    expect(memory.getItem('billstream.portal.token')).toBe('bsp_x');
    memory.removeItem('billstream.portal.token');
    expect(memory.getItem('billstream.portal.token')).toBeNull();
  });
});
