-- Up Migration

-- Payouts (src/money/payouts.ts): a safe deal's release pays the seller out of the held money. The deal's workflow
-- writes these records like every other (activities/deals/records.ts): each payout, each refund of part of the money,
-- and the delivery. Amounts are exact (numeric), in the deal's currency.

-- The marketplace's live acquirer for new deals, and the buyer's inspection window after delivery (0: release on
-- delivery). Marketplaces keep the two-stage payment they had until an operator switches them.
ALTER TABLE marketplaces
  ADD COLUMN provider        text NOT NULL DEFAULT 'yookassa_two_stage' CHECK (provider IN ('yookassa_two_stage', 'yookassa_safe_deal')),
  ADD COLUMN inspection_days integer NOT NULL DEFAULT 3 CHECK (inspection_days BETWEEN 0 AND 60);

-- A payment's acquirer deal (a safe deal's id) and where its payout stands once it is released: null for payments
-- released by capture (two-stage, and every payment from before payouts), which are paid at once.
ALTER TABLE deal_payments
  ADD COLUMN provider_deal_id text,
  ADD COLUMN payout_status    text CHECK (payout_status IN ('awaiting_destination', 'pending', 'failed', 'succeeded'));

-- Shipment, delivery and the inspection window, one per deal.
ALTER TABLE deals
  ADD COLUMN delivery_status    text CHECK (delivery_status IN ('shipped', 'delivered')),
  ADD COLUMN carrier            text,
  ADD COLUMN tracking           text,
  ADD COLUMN shipped_at         timestamptz,
  ADD COLUMN delivered_at       timestamptz,
  ADD COLUMN inspection_ends_at timestamptz,
  ADD COLUMN reminded_at        timestamptz;

CREATE TABLE deal_refunds (
  id         uuid PRIMARY KEY,
  deal_id    uuid NOT NULL REFERENCES deals (id),
  payment_id uuid NOT NULL REFERENCES deal_payments (id),
  amount     numeric(20, 2) NOT NULL CHECK (amount > 0),
  currency   char(3) NOT NULL,
  actor      text NOT NULL,
  reason     text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deal_refunds_deal_idx ON deal_refunds (deal_id, created_at);

CREATE TABLE deal_payouts (
  id                 uuid PRIMARY KEY,
  deal_id            uuid NOT NULL REFERENCES deals (id),
  payment_id         uuid NOT NULL REFERENCES deal_payments (id),
  amount             numeric(20, 2) NOT NULL CHECK (amount > 0),
  currency           char(3) NOT NULL,
  status             text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  destination_type   text NOT NULL,
  destination_title  text NOT NULL,
  provider_payout_id text,
  failure_reason     text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deal_payouts_deal_idx ON deal_payouts (deal_id, created_at);
CREATE UNIQUE INDEX deal_payouts_provider_idx ON deal_payouts (provider_payout_id) WHERE provider_payout_id IS NOT NULL;

-- Where to pay a seller: their own (set in the cabinet), or one the marketplace gives for one deal. The token (a card
-- synonym from YooKassa's payout widget, a wallet, a sandbox test card) is encrypted with the master key; `title`
-- ("Card •••• 1111") is what pages show.
CREATE TABLE payout_destinations (
  user_id         uuid PRIMARY KEY REFERENCES users (id),
  type            text NOT NULL CHECK (type IN ('test_card', 'bank_card', 'yoo_money')),
  token_encrypted text NOT NULL,
  title           text NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE deal_payout_destinations (
  deal_id         uuid PRIMARY KEY REFERENCES deals (id),
  type            text NOT NULL CHECK (type IN ('test_card', 'bank_card', 'yoo_money')),
  token_encrypted text NOT NULL,
  title           text NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE deal_payout_destinations, payout_destinations, deal_payouts, deal_refunds;
ALTER TABLE deals DROP COLUMN reminded_at, DROP COLUMN inspection_ends_at, DROP COLUMN delivered_at, DROP COLUMN shipped_at,
  DROP COLUMN tracking, DROP COLUMN carrier, DROP COLUMN delivery_status;
ALTER TABLE deal_payments DROP COLUMN payout_status, DROP COLUMN provider_deal_id;
ALTER TABLE marketplaces DROP COLUMN inspection_days, DROP COLUMN provider;
