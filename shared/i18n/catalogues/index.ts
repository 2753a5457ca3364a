/**
 * Every catalogue area, one import per line (an area is one file, so work on different pages
 * touches different files).
 */
import type { AreaCatalogue } from '../types.js';
import { account } from './account.js';
import { accountSignIns } from './account-sign-ins.js';
import { common } from './common.js';
import { consent } from './consent.js';
import { errors } from './errors.js';
import { login } from './login.js';
import { logout } from './logout.js';
import { mail } from './mail.js';
import { landing } from './landing.js';
import { scopes } from './scopes.js';

export const CATALOGUES: Record<string, AreaCatalogue> = {
  account,
  accountSignIns,
  common,
  consent,
  errors,
  landing,
  login,
  logout,
  mail,
  scopes,
};
