"""Email delivery over SMTP with ``aiosmtplib`` (LINEUP_SMTP_*): the same short text as a push
and a link to the card; nothing of the request itself."""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import aiosmtplib

from lineup.hub.notify.push import SendResult


@dataclass(frozen=True, slots=True)
class SmtpSettings:
    host: str
    port: int
    username: str | None
    password: str | None
    tls: str  # "starttls" (default), "tls" (implicit, port 465) or "none"
    sender: str
    timeout: float = 15.0


class EmailSender:
    def __init__(self, smtp: SmtpSettings) -> None:
        self.smtp = smtp

    def message(
        self, to: str, subject: str, text: str, link: str, message_key: str, sent_at_s: float
    ) -> EmailMessage:
        from datetime import UTC, datetime

        message = EmailMessage()
        message["From"] = self.smtp.sender
        message["To"] = to
        message["Subject"] = subject
        message["Date"] = format_datetime(datetime.fromtimestamp(sent_at_s, UTC))
        # The same Message-ID for a resend, so mail clients can tell it is the same message.
        domain = self.smtp.sender.rsplit("@", 1)[-1].strip("> ") or "lineup.invalid"
        message["Message-ID"] = make_msgid(idstring=message_key[:32], domain=domain)
        message["Auto-Submitted"] = "auto-generated"
        message.set_content(
            f"{text}\n\nOpen it in LineUp: {link}\n\n"
            "You get this because of your notification settings in LineUp "
            "(Settings → Notifications).\n"
        )
        return message

    async def send(self, message: EmailMessage) -> SendResult:
        smtp = self.smtp
        try:
            await aiosmtplib.send(
                message,
                hostname=smtp.host,
                port=smtp.port,
                username=smtp.username or None,
                password=smtp.password or None,
                use_tls=smtp.tls == "tls",
                start_tls=smtp.tls == "starttls",
                timeout=smtp.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [r.code for r in exc.recipients]
            transient = any(400 <= c < 500 for c in codes)
            error = f"recipient refused ({', '.join(str(c) for c in codes)})"
            code = codes[0] if codes else None
            return SendResult("retry" if transient else "failed", code, error)
        except aiosmtplib.SMTPResponseException as exc:
            error = f"{exc.code} from the mail server: {exc.message[:200]}"
            return SendResult("retry" if 400 <= exc.code < 500 else "failed", exc.code, error)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            return SendResult("retry", None, f"mail server unreachable: {type(exc).__name__}")
        return SendResult("delivered", 250)
