"""A private Dovecot for the inbound e-mail tests: Debian's ``dovecot-imapd`` run as an
unprivileged instance on a loopback port, with its own configuration, mail folder and
passwd-file users in a temporary folder. The system's Dovecot service (``/etc/dovecot``) is
never started, read or touched.

Without Dovecot the tests skip, saying so; ``REQUIRE_IMAP=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import contextlib
import imaplib
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import wait_for

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"
PASSWORD = "mail-test-password"
USERS = 100  # mailboxes, one per test
_users = itertools.count(1)

CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = {login_user}
default_internal_user = {internal_user}
default_internal_group = {internal_group}
mail_location = maildir:{root}/mail/%u
# The mail user is a system account (dovecot, below 500) or the one running the tests.
first_valid_uid = 1
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service auth {{
  user = {auth_user}
}}
service auth-worker {{
  user = {auth_user}
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/mail/%u
}}
"""


def missing(reason: str) -> None:
    if os.environ.get("REQUIRE_IMAP") == "1":
        pytest.fail(f"REQUIRE_IMAP=1 but the IMAP tests cannot run: {reason}", pytrace=False)
    pytest.skip(f"{reason}: apt-get install dovecot-imapd to run the IMAP tests")


@dataclass
class Dovecot:
    root: Path
    port: int
    process: subprocess.Popen

    def new_user(self) -> str:
        """A user of its own for a test: a mailbox nobody else's test has touched."""
        number = next(_users)
        assert number <= USERS, "more mailboxes than the passwd-file has: raise USERS"
        return f"docket{number}"

    def client(self, user: str) -> imaplib.IMAP4:
        imap = imaplib.IMAP4("127.0.0.1", self.port, timeout=10)
        imap.login(user, PASSWORD)
        return imap

    def append(self, user: str, message: bytes, folder: str = "INBOX") -> None:
        """Deliver a message as a test's sender would have it arrive: IMAP APPEND."""
        imap = self.client(user)
        try:
            status, answer = imap.append(folder, None, None, message)
            assert status == "OK", answer
        finally:
            imap.logout()

    def count(self, user: str, folder: str) -> int:
        imap = self.client(user)
        try:
            status, answer = imap.select(folder, readonly=True)
            return int(answer[0]) if status == "OK" else 0
        finally:
            imap.logout()

    def log(self) -> str:
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
        return conn.recv(64).startswith(b"* OK")
    return False


@pytest.fixture(scope="session")
def dovecot():
    if not os.path.exists(DOVECOT):
        missing("no dovecot (Debian's dovecot-imapd)")
    root = Path(tempfile.mkdtemp(prefix="docket-dovecot-"))
    if os.geteuid() == 0:
        # Dovecot runs no mail or login process as root: they run as the package's own users,
        # which must reach the folder (traverse only) and own the mail in it.
        try:
            mail_user, login_user = pwd.getpwnam("dovecot"), pwd.getpwnam("dovenull")
        except KeyError:
            missing("the dovecot and dovenull users are missing (reinstall dovecot-core)")
        uid, gid = mail_user.pw_uid, mail_user.pw_gid
        names = {"login_user": login_user.pw_name, "internal_user": "dovecot", "internal_group": "dovecot",
                 "auth_user": "root"}
        os.chmod(root, 0o711)  # noqa: S103 (traverse only: Dovecot's mail user reaches its folder)
    else:
        uid, gid = os.getuid(), os.getgid()
        me = pwd.getpwuid(uid).pw_name
        names = {"login_user": me, "internal_user": me, "internal_group": me, "auth_user": me}
    (root / "mail").mkdir()
    os.chown(root / "mail", uid, gid)
    # Every user at once: Dovecot reads the file again when its time changes, which two
    # writes within one second would not show.
    (root / "passwd").write_text("".join(f"docket{n}:{{PLAIN}}{PASSWORD}\n" for n in range(1, USERS + 1)))
    port = _free_port()
    (root / "dovecot.conf").write_text(CONFIG.format(root=root, port=port, uid=uid, gid=gid, **names))
    process = subprocess.Popen([DOVECOT, "-F", "-c", str(root / "dovecot.conf")], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: process.poll() is not None or _accepts(port), timeout=15)
        if process.poll() is not None:
            pytest.fail(f"dovecot did not start: {process.stderr.read().decode(errors='replace')[-2000:]}"
                        if process.stderr else "dovecot did not start")
        yield Dovecot(root, port, process)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
