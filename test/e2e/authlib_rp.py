"""A Python relying party built on Debian's Authlib (python3-authlib 1.2.0), for test/e2e/authlib.test.ts.

Discovery, the authorization URL with nonce, state and PKCE (S256), the code exchange
(client_secret_basic), ID-token validation with Authlib's JOSE and OIDC classes against the JWKS
(signature, iss, aud, nonce, exp, iat, at_hash), and UserInfo. Debian ships Authlib without
python3-requests, so HTTP goes through urllib instead of authlib.integrations.requests_client;
every protocol check is Authlib's own.

Protocol with the test: argv = issuer client_id client_secret redirect_uri; prints one JSON line
{"authorization_url"}; reads the callback URL on stdin; prints one JSON line with the results.
"""
import base64
import json
import sys
import urllib.parse
import urllib.request

from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.jose.errors import BadSignatureError, ExpiredTokenError, InvalidClaimError, MissingClaimError
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken, UserInfo


def get_json(url, headers=None):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as response:
        return json.loads(response.read())


def main():
    issuer, client_id, client_secret, redirect_uri = sys.argv[1:5]
    metadata = get_json(issuer + '/.well-known/openid-configuration')
    assert metadata['issuer'] == issuer, metadata['issuer']

    nonce, state, verifier = generate_token(32), generate_token(20), generate_token(64)
    authorization_url = add_params_to_uri(metadata['authorization_endpoint'], [
        ('response_type', 'code'), ('client_id', client_id), ('redirect_uri', redirect_uri),
        ('scope', 'openid identify email'), ('state', state), ('nonce', nonce),
        ('code_challenge', create_s256_code_challenge(verifier)), ('code_challenge_method', 'S256'),
    ])
    print(json.dumps({'authorization_url': authorization_url}), flush=True)

    callback = urllib.parse.urlparse(sys.stdin.readline().strip())
    params = dict(urllib.parse.parse_qsl(callback.query))
    assert params.get('state') == state, 'state mismatch'
    assert params.get('iss') == issuer, 'iss parameter mismatch (RFC 9207)'

    basic = base64.b64encode(f'{urllib.parse.quote(client_id)}:{urllib.parse.quote(client_secret)}'.encode()).decode()
    body = urllib.parse.urlencode({'grant_type': 'authorization_code', 'code': params['code'], 'redirect_uri': redirect_uri, 'code_verifier': verifier}).encode()
    request = urllib.request.Request(metadata['token_endpoint'], data=body, headers={'Authorization': 'Basic ' + basic, 'Content-Type': 'application/x-www-form-urlencoded'})
    with urllib.request.urlopen(request) as response:
        token = json.loads(response.read())

    keys = JsonWebKey.import_key_set(get_json(metadata['jwks_uri']))
    jwt = JsonWebToken(metadata['id_token_signing_alg_values_supported'])

    def decode(id_token, audience=client_id, access_token=token['access_token']):
        claims = jwt.decode(id_token, key=keys, claims_cls=CodeIDToken,
                            claims_options={'iss': {'essential': True, 'value': issuer}, 'aud': {'essential': True, 'value': audience}},
                            claims_params={'nonce': nonce, 'client_id': audience, 'access_token': access_token})
        return claims

    claims = decode(token['id_token'])
    claims.validate()
    result = {'claims': dict(claims), 'header': dict(claims.header)}

    def refused(action):
        try:
            action()
        except (BadSignatureError, ExpiredTokenError, InvalidClaimError, MissingClaimError) as error:
            return type(error).__name__ + ': ' + str(error)
        return None

    header, payload, signature = token['id_token'].split('.')
    forged = json.loads(base64.urlsafe_b64decode(payload + '=' * (-len(payload) % 4)))
    forged['sub'] = forged['sub'] + '1'
    tampered = '.'.join([header, base64.urlsafe_b64encode(json.dumps(forged).encode()).decode().rstrip('='), signature])
    result['tampered'] = refused(lambda: decode(tampered).validate())
    result['wrong_audience'] = refused(lambda: decode(token['id_token'], audience='someone-else').validate())
    result['expired'] = refused(lambda: decode(token['id_token']).validate(now=claims['exp'] + 120, leeway=0))
    result['wrong_at_hash'] = refused(lambda: decode(token['id_token'], access_token='not-the-access-token').validate())

    info = UserInfo(get_json(metadata['userinfo_endpoint'], {'Authorization': 'Bearer ' + token['access_token']}))
    result['userinfo'] = dict(info)
    print(json.dumps(result), flush=True)


if __name__ == '__main__':
    main()
