// The action's main step (action.yml runs dist/main/index.js).
import { run } from './main.js';

void run();
