// The action's post step (action.yml runs dist/post/index.js).
import { run } from './post.js';

void run();
