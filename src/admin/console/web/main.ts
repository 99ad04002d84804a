// The console's entry point: esbuild bundles this (and the stylesheet it
// imports) into dist/console at build time.
import { render } from 'preact';
import { html } from 'htm/preact';
import { App } from './app.js';
import './console.css';

const root = document.getElementById('app');
if (root !== null) render(html`<${App} />`, root);
