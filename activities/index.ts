// Every activity the worker registers, built over the process's services.
import type { Services } from '../src/services.ts';
import { createMailActivities } from './mail.ts';

export function createActivities(services: Services) {
  return {
    ...createMailActivities(services.mailer),
  };
}

export type Activities = ReturnType<typeof createActivities>;
