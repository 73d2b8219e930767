import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Portal } from './Portal';
import { takeEmailLink } from './token';
import '../base.css';
import './portal.css';

void takeEmailLink(window.location, window.history, window.sessionStorage).then((token) =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <Portal token={token} />
    </StrictMode>,
  ),
);
