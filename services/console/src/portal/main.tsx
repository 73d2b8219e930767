import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Portal } from './Portal';
import { tabStorage, takeEmailLink } from './token';
import '../base.css';
import './portal.css';

void takeEmailLink(window.location, window.history, tabStorage(window)).then((token) =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <Portal token={token} />
    </StrictMode>,
  ),
);
