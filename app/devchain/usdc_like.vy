# pragma version 0.4.3
# A USDC-like test token: 6 decimals, EIP-712 domain (name, version), EIP-3009
# transferWithAuthorization with FiatTokenV2's revert messages. For tests on a local chain only.

event Transfer:
    sender: indexed(address)
    receiver: indexed(address)
    value: uint256

event AuthorizationUsed:
    authorizer: indexed(address)
    nonce: indexed(bytes32)

name: public(String[32])
version: public(String[8])
decimals: public(constant(uint8)) = 6
totalSupply: public(uint256)
balanceOf: public(HashMap[address, uint256])
authorizationState: public(HashMap[address, HashMap[bytes32, bool]])
DOMAIN_SEPARATOR: public(bytes32)

EIP712_DOMAIN_TYPEHASH: constant(bytes32) = keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
TWA_TYPEHASH: constant(bytes32) = keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")


@deploy
def __init__(_name: String[32], _version: String[8]):
    self.name = _name
    self.version = _version
    self.DOMAIN_SEPARATOR = keccak256(abi_encode(EIP712_DOMAIN_TYPEHASH, keccak256(_name), keccak256(_version), chain.id, self))


@external
def mint(receiver: address, amount: uint256):
    self.totalSupply += amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=empty(address), receiver=receiver, value=amount)


@internal
def _transfer(sender: address, receiver: address, amount: uint256):
    assert self.balanceOf[sender] >= amount, "ERC20: transfer amount exceeds balance"
    self.balanceOf[sender] -= amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=sender, receiver=receiver, value=amount)


@external
def transfer(receiver: address, amount: uint256) -> bool:
    self._transfer(msg.sender, receiver, amount)
    return True


@external
def transferWithAuthorization(_from: address, to: address, amount: uint256, validAfter: uint256, validBefore: uint256, nonce: bytes32, v: uint8, r: bytes32, s: bytes32):
    assert block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid"
    assert block.timestamp < validBefore, "FiatTokenV2: authorization is expired"
    assert not self.authorizationState[_from][nonce], "FiatTokenV2: authorization is used or canceled"
    struct_hash: bytes32 = keccak256(abi_encode(TWA_TYPEHASH, _from, to, amount, validAfter, validBefore, nonce))
    digest: bytes32 = keccak256(concat(b"\x19\x01", self.DOMAIN_SEPARATOR, struct_hash))
    assert convert(s, uint256) <= 57896044618658097711785492504343953926418782139537452191302581570759080747168, "FiatTokenV2: invalid signature"
    signer: address = ecrecover(digest, v, r, s)
    assert signer != empty(address) and signer == _from, "FiatTokenV2: invalid signature"
    self.authorizationState[_from][nonce] = True
    log AuthorizationUsed(authorizer=_from, nonce=nonce)
    self._transfer(_from, to, amount)
