// esbuild bundles imported stylesheets into main.css beside main.js.
declare module '*.css';
