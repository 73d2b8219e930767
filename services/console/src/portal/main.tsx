import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Portal } from './Portal';
import { takeToken } from './token';
import './portal.css';

const token = takeToken(window.location, window.history, window.sessionStorage);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Portal token={token} />
  </StrictMode>,
);
