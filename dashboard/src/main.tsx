import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { takeTokenFromLink } from './session';
import { completeOidc } from './oidc';
import './app.css';

takeTokenFromLink();
// Back from the identity provider, the code is traded for the ID token before the app shows.
void completeOidc().finally(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  ),
);
