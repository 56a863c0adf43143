// The contract Continue generates when a deal has no document: a DOCX (the `docx` package) with the parties, title,
// amount, currency and description, in the widget's language. It is a template for the buyer to read and approve,
// not legal advice; marketplaces with their own contract upload it instead.
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import type { DealRecord } from '../deals/model.ts';

export type ContractLocale = 'ru' | 'en';
export const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const WORDS = {
  en: {
    file: 'Contract.docx',
    title: (title: string) => `Contract for “${title}”`,
    number: (id: string, date: string) => `No. ${id}, ${date}`,
    parties: 'Parties',
    buyer: 'Buyer',
    seller: 'Seller',
    sellerUnknown: 'the seller of the marketplace',
    marketplace: 'Marketplace',
    subject: 'Subject',
    subjectText: (title: string) => `The Seller sells and the Buyer buys: ${title}.`,
    description: 'Description',
    price: 'Price',
    priceText: (amount: string, currency: string) => `${amount} ${currency}, paid in full through the safe deal.`,
    payment: 'Safe deal',
    paymentText:
      "The Buyer's money is held in escrow after the Buyer approves this contract. It is released to the Seller " +
      'when the Buyer confirms the deal, and returned to the Buyer if the deal is cancelled.',
    effect: 'This contract takes effect when the Buyer approves it in the cabinet.',
    deal: 'Deal',
  },
  ru: {
    file: 'Договор.docx',
    title: (title: string) => `Договор по сделке «${title}»`,
    number: (id: string, date: string) => `№ ${id} от ${date}`,
    parties: 'Стороны',
    buyer: 'Покупатель',
    seller: 'Продавец',
    sellerUnknown: 'продавец маркетплейса',
    marketplace: 'Маркетплейс',
    subject: 'Предмет договора',
    subjectText: (title: string) => `Продавец продаёт, а Покупатель покупает: ${title}.`,
    description: 'Описание',
    price: 'Цена',
    priceText: (amount: string, currency: string) =>
      `${amount} ${currency}, оплачивается полностью через безопасную сделку.`,
    payment: 'Безопасная сделка',
    paymentText:
      'Деньги Покупателя резервируются (эскроу) после того, как Покупатель согласует этот договор. Они переводятся ' +
      'Продавцу, когда Покупатель подтверждает сделку, и возвращаются Покупателю, если сделка отменена.',
    effect: 'Договор вступает в силу, когда Покупатель согласует его в личном кабинете.',
    deal: 'Сделка',
  },
} as const;

/** The amount as people of that language write it (two decimals). */
export function formatAmount(amount: number, locale: ContractLocale): string {
  return new Intl.NumberFormat(locale === 'ru' ? 'ru-RU' : 'en-US', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(amount);
}

export function contractFileName(locale: ContractLocale): string {
  return WORDS[locale].file;
}

export async function contractDocx(
  deal: DealRecord,
  marketplaceName: string,
  locale: ContractLocale,
  today = new Date(),
): Promise<Buffer> {
  const w = WORDS[locale];
  const title = deal.title || deal.external_id;
  const date = today.toLocaleDateString(locale === 'ru' ? 'ru-RU' : 'en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const heading = (text: string) => new Paragraph({ text, heading: HeadingLevel.HEADING_2 });
  const field = (label: string, value: string) =>
    new Paragraph({ children: [new TextRun({ text: `${label}: `, bold: true }), new TextRun(value)] });
  const buyer = deal.buyer_name ? `${deal.buyer_name} <${deal.buyer_email}>` : deal.buyer_email;

  const document = new Document({
    creator: marketplaceName,
    title: w.title(title),
    sections: [
      {
        children: [
          new Paragraph({ text: w.title(title), heading: HeadingLevel.TITLE, alignment: AlignmentType.CENTER }),
          new Paragraph({ text: w.number(deal.external_id, date), alignment: AlignmentType.CENTER }),
          heading(w.parties),
          field(w.buyer, buyer),
          field(w.seller, deal.seller_email || w.sellerUnknown),
          field(w.marketplace, marketplaceName),
          heading(w.subject),
          new Paragraph(w.subjectText(title)),
          ...(deal.description ? [field(w.description, deal.description)] : []),
          heading(w.price),
          new Paragraph(w.priceText(formatAmount(deal.amount, locale), deal.currency)),
          heading(w.payment),
          new Paragraph(w.paymentText),
          new Paragraph(w.effect),
          new Paragraph({ children: [new TextRun({ text: `${w.deal}: ${deal.id}`, size: 16 })] }),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}
