#!/usr/bin/env node
// Recall's CLI (package.json's bin). Its code is in ../bundle/, built from src/ by scripts/build.mjs.
import { cli } from '../bundle/index.js';

await cli();
