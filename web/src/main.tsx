// The dashboard's entry: theme (light and dark), the server-state cache, session, routes; every page
// loads on demand.
import '@mantine/core/styles.css';
import './theme.css';
import { createTheme, localStorageColorSchemeManager, MantineProvider } from '@mantine/core';
import { QueryClientProvider } from '@tanstack/react-query';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { createQueryClient } from './api/query-client';
import { App } from './App';
import { AuthProvider } from './auth';

const theme = createTheme({
  primaryColor: 'blue',
  // Shade 8 keeps white text on filled buttons above 4.5:1 (shade 6 is ~3.5:1).
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: 'sm',
});

/** The per-response nonce the service put in the page (Vite's csp-nonce meta tag). */
function styleNonce(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]');
  return meta?.nonce ?? meta?.getAttribute('nonce') ?? '';
}

// react-remove-scroll (Mantine's modals and dropdowns) adds a <style> element; it takes the nonce here.
setNonce(styleNonce());

const queryClient = createQueryClient();

const root = document.getElementById('root');
if (root === null) throw new Error('#root is missing');
createRoot(root).render(
  <StrictMode>
    <MantineProvider
      theme={theme}
      defaultColorScheme="auto"
      colorSchemeManager={localStorageColorSchemeManager({ key: 'platform-color-scheme' })}
      getStyleNonce={styleNonce}
    >
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <AuthProvider>
            <App />
          </AuthProvider>
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
