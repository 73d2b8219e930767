import { lazy } from 'react';

/**
 * The support actions' forms, loaded on first use: zod and the contracts' schemas are a chunk
 * of their own, so the first page stays light (ADR 0050, "The forms").
 */
const customer = () => import('./customer-forms');
const invoice = () => import('./invoice-forms');
const subscription = () => import('./subscription-forms');
const taxRate = () => import('./tax-rate-forms');

export const CreateCustomerForm = lazy(() => customer().then((m) => ({ default: m.CreateCustomerForm })));
export const TopUpForm = lazy(() => customer().then((m) => ({ default: m.TopUpForm })));
export const CreditNoteForm = lazy(() => invoice().then((m) => ({ default: m.CreditNoteForm })));
export const PaymentForm = lazy(() => invoice().then((m) => ({ default: m.PaymentForm })));
export const VoidInvoiceForm = lazy(() => invoice().then((m) => ({ default: m.VoidInvoiceForm })));
export const FinalizeInvoiceForm = lazy(() => invoice().then((m) => ({ default: m.FinalizeInvoiceForm })));
export const ChangePlanForm = lazy(() => subscription().then((m) => ({ default: m.ChangePlanForm })));
export const ApplyCouponForm = lazy(() => subscription().then((m) => ({ default: m.ApplyCouponForm })));
export const CreateTaxRateForm = lazy(() => taxRate().then((m) => ({ default: m.CreateTaxRateForm })));
export const EditTaxRateForm = lazy(() => taxRate().then((m) => ({ default: m.EditTaxRateForm })));
