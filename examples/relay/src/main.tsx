import { StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { RelayEnvironmentProvider } from 'react-relay';
import { App } from './App';
import { environment } from './environment';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <RelayEnvironmentProvider environment={environment}>
      <Suspense fallback={<p>Loading…</p>}>
        <App />
      </Suspense>
    </RelayEnvironmentProvider>
  </StrictMode>,
);
