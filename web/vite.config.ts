// Builds the dashboard into web/dist, which the service serves at /. Every script and style tag
// carries the CSP nonce placeholder the service replaces per response (src/http/web-app.ts).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  html: { cspNonce: '__CSP_NONCE__' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    // The audio worklet is loaded by URL (audioWorklet.addModule): inlined as a data: URL, the
    // Content Security Policy (script-src 'self' with a nonce) refuses it, so it stays a file.
    assetsInlineLimit: (file) => (file.endsWith('-worklet.js') ? false : undefined),
  },
  server: {
    proxy: {
      '/v1': { target: 'http://127.0.0.1:8080', ws: true },
      '/models': 'http://127.0.0.1:8080',
      '/openapi.json': 'http://127.0.0.1:8080',
    },
  },
});
