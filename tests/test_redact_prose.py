"""Redaction of ``password:``: the word in a sentence is prose ("the password: prompt never appeared",
"Password: field in the form" were stored as "the password: <redacted> never appeared"), a credential
after it is a secret. Every real secret shape stays redacted (tests/test_clean_text.py has the table)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.util import redact

PROSE = ["the password: prompt never appeared", "Password: field in the form stays empty",
         "the passphrase: prompt hung for an hour", "ssh asks Password: and waits forever",
         "after the password: dialog closed the job resumed", "Token: expired at step 5"]


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_a_password_is_kept(text):
    assert redact.clean(text) == text  # before: "the password: <redacted> never appeared"


@pytest.mark.parametrize("raw, secret", [
    ("password: hunter2", "hunter2"), ("Password: s3cr3tP4ss", "s3cr3tP4ss"), ("DB password: hunter2", "hunter2"),
    ("password: letmein", "letmein"),  # a plain word that ends the line is the value
    ("password: hunter2again; Bearer x", "hunter2again"), ("password: hunter2 and more", "hunter2"),
    ("PASSWORD: abc def", "abc"), ("--password: hunter more", "hunter"), ('password: "plain words"', "plain words"),
    ("password = prompt never appeared", "prompt"), ("db_password: plain more", "plain"),
    ("passphrase: correct horse battery staple", "horse battery staple"),  # content words only: a passphrase
    ("password: correct horse battery staple; user: bob", "battery"),
    ("Password: field form box", "form box"),
])
def test_a_credential_after_password_is_still_redacted(raw, secret):
    out = redact.clean(raw)
    assert secret not in out and "<redacted>" in out, out


WORDS = st.sampled_from(["the", "a", "prompt", "field", "never", "appeared", "in", "form", "dialog", "login",
                         "screen", "was", "empty", "after", "reset", "box", "hangs", "ssh", "asks", "and", "for",
                         "user", "expired", "at", "step", "key", "differences", "secret", "santa"])
LABELS = st.sampled_from(["password", "Password", "passphrase", "Passphrase", "passwd", "token", "Token",
                          "secret", "Secret", "key", "Key"])


GRAMMAR = st.sampled_from(["the", "a", "in", "was", "and", "for", "at", "never", "after", "did", "not", "to"])


# the words that tell a password's story (its prompt, field, reset ...) or grammar: prose after the label
STORY = st.sampled_from(["prompt", "field", "form", "dialog", "login", "screen", "reset", "box", "expired", "the",
                         "a", "and", "in", "for", "never", "empty", "policy", "mismatch"])


@settings(max_examples=150, deadline=None)
@given(before=st.lists(WORDS, max_size=4), label=LABELS, first=STORY, between=st.lists(WORDS, max_size=3),
       grammar=GRAMMAR, after=st.lists(WORDS, max_size=3), end=st.sampled_from(["", ".", "!", " (see above)."]))
def test_random_prose_with_the_words_is_unchanged(before, label, first, between, grammar, after, end):
    """A sentence: the label, a word of the password's story, and within four words a grammar word."""
    text = " ".join([*before, f"{label}:", first, *between, grammar, *after]) + end
    assert redact.clean(text) == text


# Any other plain word after the label may be the password ("the password: changeme is the default"):
# it is redacted even when a sentence goes on after it (a word of prose lost is the cheaper mistake).
PLAIN = st.sampled_from(["tiger", "changeme", "santa", "letmein", "dragon", "sunshine", "admin", "monkey"])


@settings(max_examples=100, deadline=None)
@given(before=st.lists(WORDS, max_size=3), label=st.sampled_from(["password", "Password", "passphrase", "passwd"]),
       value=PLAIN, grammar=GRAMMAR, after=st.lists(WORDS, max_size=3), colon=st.sampled_from([": ", ":", ":\t"]))
def test_a_plain_word_after_a_password_label_is_redacted_though_a_sentence_goes_on(before, label, value, grammar,
                                                                                   after, colon):
    text = " ".join([*before, f"{label}{colon}{value}", grammar, *after])
    assert redact.clean(text) == " ".join([*before, f"{label}{colon}<redacted>", grammar, *after])


CONTENT = st.sampled_from(["correct", "horse", "battery", "staple", "purple", "monkey", "dishwasher", "river"])


@settings(max_examples=100, deadline=None)
@given(label=st.sampled_from(["password", "Password", "passphrase", "passwd"]), words=st.lists(CONTENT, min_size=1,
       max_size=5), end=st.sampled_from(["", ";", ", next", "\nnext line"]))
def test_a_passphrase_of_content_words_is_redacted_whole(label, words, end):
    text = f"{label}: " + " ".join(words) + end
    out = redact.clean(text)
    assert not any(w in out for w in words), (text, out)


# A credential: letters and at least one digit or symbol (a word alone at a line's end is covered above).
SECRETS = st.builds(lambda a, b, c: a + b + c,
                    st.text("abcdefghijkLMNOPQRSTxyz", min_size=3, max_size=12),
                    st.sampled_from(list("0123456789!#%*+_.~")),
                    st.text("abcdefXYZ0123456789", min_size=3, max_size=12))


@settings(max_examples=150, deadline=None)
@given(secret=SECRETS, shape=st.sampled_from([
    "password: {s}", "Password: {s}", "the db password: {s} and more", "passphrase: {s}; next",
    "DB_PASSWORD={s} python x.py", "export MY_SERVICE_TOKEN={s}", 'api_key: "{s}"', '{{"token": "{s}"}}',
    "--password {s}", "--api-key={s}", "git clone https://me:{s}@github.com/x/y", "Authorization: token{s}",
    "curl -H 'Authorization: Bearer {s}xxxxxxxxxxxx'", "client_secret: {s}"]))
def test_random_secrets_in_every_shape_are_redacted(secret, shape):
    text = shape.format(s=secret)
    out = redact.clean(text)
    assert secret not in out and "<redacted>" in out, (text, out)
    assert redact.clean(out) == out


PIECES = st.sampled_from(["password:", "Password:", "passphrase:", " ", "\n", ";", ",", "the", "and", "hunter2",
                          "horse", "<redacted>", "token:", "HF_TOKEN=", "abc", "--password", "=", '"', "in"])


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, max_size=14))
def test_cleaning_is_idempotent_on_labels_run_together(parts):
    """'--password token: password: password:' took two cleanings to settle (a match that kept its text hid
    the next one), so a stored text could be cleaned again on every write."""
    once = redact.clean(" ".join(parts))
    assert redact.clean(once) == once


@pytest.mark.parametrize("text, secret", [
    ("PGPASSWORD=Tiger123xyz psql -h db", "Tiger123xyz"), ("export MYSQL_PWD=Tiger123xyz", "Tiger123xyz"),
    ("SSHPASS=s3cret sshpass -e ssh gpu01", "s3cret"),
    ("mysql -u root -pTiger123 mydb", "Tiger123"), ("mysqldump -uroot -ps3cret db > x.sql", "s3cret"),
    ("curl -u admin:tiger https://gpu01/metrics", "tiger"), ("curl --user admin:tiger x", "tiger"),
    ("curl -uadmin:tiger x", "tiger"),
])
def test_database_and_http_clients_passwords_are_redacted(text, secret):
    out = redact.clean(text)
    assert secret not in out and "<redacted>" in out, out


@pytest.mark.parametrize("text", ["PWD=/home/me/run", "mysql -u root -p mydb", "mkdir -p /tmp/x", "curl -u admin x",
                                  "mysql -p$DB_PASS db", "curl -u admin:$PW x", "ssh -p 2222 gpu01"])
def test_what_only_looks_like_a_client_password_is_kept(text):
    assert redact.clean(text) == text  # the working directory, a prompt for it, a reference to it, a port


@pytest.mark.parametrize("text, secret", [
    ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("MODEL_REPO=ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "ghp_ABCDEFGHIJ"),
    ("FOO=hf_abcdefghijklmnopqrstuvwx", "hf_abcdefghijklmnopqrstuvwx"),
    ("cache/hf_abcdefghijklmnopqrstuvwx", "hf_abcdefghijklmnopqrstuvwx"),
    ("GET https://api.example.com/v1?token=abcdef1234567890secret&x=1", "abcdef1234567890secret"),
    ("https://e.com/x?access_token=abcabcabcabc", "abcabcabcabc"),
    ("wget http://h:8000/v1?api_key=k3y-live-77&q=1", "k3y-live-77"),
])
def test_a_token_after_equals_or_a_slash_and_a_urls_query_secret_are_redacted(text, secret):
    """An adversarial probe: a well-known token shape right after '=' or '/' (`KEY=AKIA...`, `REPO=ghp_...`) and a
    secret in a URL's query (`?token=...`) reached logs/ in clear: the token patterns did not start after those,
    and a URL's scheme was read as 'https: //...' whose value swallowed the rest of the line."""
    out = redact.clean(text)
    assert secret not in out and "<redacted>" in out, out


@pytest.mark.parametrize("text, secret", [
    ("logged in with token \x1b[1mhf_abcdefghijklmnopqrstuvwx12\x1b[0m", "hf_abcdefghijklmnopqrstuvwx12"),
    ("\x1b[32mghp_" + "G" * 36 + "\x1b[0m", "ghp_" + "G" * 36),
    ("\x1b[38;5;196mAKIAIOSFODNN7EXAMPLE\x1b[m", "AKIAIOSFODNN7EXAMPLE"),
])
def test_a_token_right_after_a_terminal_colour_is_redacted(text, secret):
    """An adversarial probe: a coloured log (rich, colorlog) put `\\x1b[1m` right before a token, whose 'm' read as
    the end of a longer word, and the run's output files kept it in clear."""
    out = redact.redact(text)
    assert secret not in out and "<redacted>" in out, out
