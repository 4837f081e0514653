//! A decoded request: the command and the validated value its message carries.

use super::super::tunables::Tunables;
use super::super::Tid;
use super::codec::{Reader, Writer};
use super::declare::{read, Message};
use super::errors::AbiError;
use super::ioctl::{
    ioc_size, ADD_CRITICAL, GET_CRITICAL, GET_STATS, GET_TUNABLES, GET_VERSION, REMOVE_CRITICAL,
    RESET_STATS, SET_CRITICAL, SET_ENABLED, SET_TUNABLES,
};
use super::messages::{
    CriticalEntry, CriticalList, CriticalOne, Enable, Header, StatsMsg, TidMsg, TunablesMsg,
};
use super::names::TidSpace;

/// A decoded, validated request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// [`GET_VERSION`].
    GetVersion,
    /// [`SET_CRITICAL`].
    SetCritical(CriticalList),
    /// [`ADD_CRITICAL`].
    AddCritical(CriticalEntry),
    /// [`REMOVE_CRITICAL`].
    RemoveCritical(Tid),
    /// [`SET_ENABLED`].
    SetEnabled(bool),
    /// [`GET_TUNABLES`].
    GetTunables,
    /// [`SET_TUNABLES`].
    SetTunables(Tunables),
    /// [`GET_STATS`].
    GetStats,
    /// [`RESET_STATS`].
    ResetStats,
    /// [`GET_CRITICAL`].
    GetCritical,
}

impl Request {
    /// Whether applying it can change which probe groups the engine wants: the platform then
    /// attaches them before the request returns (a registered thread's readers are recorded
    /// from then on), where other changes reach the probes some time later.
    pub fn changes_probes(&self) -> bool {
        matches!(
            self,
            Self::SetCritical(_)
                | Self::AddCritical(_)
                | Self::SetEnabled(_)
                | Self::SetTunables(_)
        )
    }

    /// Decodes the argument of ioctl `cmd` from `buf`, which holds `ioc_size(cmd)` bytes
    /// (for commands that read input) and is otherwise ignored.
    pub fn decode(cmd: u32, buf: &[u8]) -> Result<Self, AbiError> {
        // A read command's argument is only checked for its size and header.
        let header_only = |size, req| Reader::message(buf, size).map(|_| req);
        Ok(match cmd {
            GET_VERSION => Self::GetVersion,
            SET_CRITICAL => Self::SetCritical(CriticalList::decode(buf)?),
            ADD_CRITICAL => Self::AddCritical(read::<CriticalOne>(buf)?.check()?),
            REMOVE_CRITICAL => Self::RemoveCritical(read::<TidMsg>(buf)?.check()?),
            SET_ENABLED => Self::SetEnabled(read::<Enable>(buf)?.check()?),
            GET_TUNABLES => header_only(TunablesMsg::SIZE, Self::GetTunables)?,
            SET_TUNABLES => Self::SetTunables(read::<TunablesMsg>(buf)?.check()?),
            GET_STATS => header_only(StatsMsg::SIZE, Self::GetStats)?,
            RESET_STATS => header_only(Header::SIZE, Self::ResetStats)?,
            GET_CRITICAL => header_only(CriticalList::SIZE, Self::GetCritical)?,
            _ => return Err(AbiError::UnknownCommand),
        })
    }

    /// Renames the request's TIDs from the caller's to the engine's, through `space`.
    ///
    /// A thread to register that the caller cannot see is [`AbiError::NoSuchTask`]; one to
    /// remove, [`AbiError::NotFound`], as for a thread that is not registered.
    pub fn to_engine(&mut self, space: &impl TidSpace) -> Result<(), AbiError> {
        match self {
            Self::SetCritical(l) => {
                for e in l.entries_mut() {
                    e.tid = space.to_engine(e.tid).ok_or(AbiError::NoSuchTask)?;
                }
            }
            Self::AddCritical(e) => e.tid = space.to_engine(e.tid).ok_or(AbiError::NoSuchTask)?,
            Self::RemoveCritical(tid) => *tid = space.to_engine(*tid).ok_or(AbiError::NotFound)?,
            _ => {}
        }
        Ok(())
    }
}

/// Writes the header a caller must put in the argument of a read-only command such as
/// [`GET_STATS`], so the kernel can check size and version before replying.
pub fn request_header(cmd: u32, buf: &mut [u8]) -> Result<(), AbiError> {
    let size = ioc_size(cmd);
    Writer::new(buf, size.max(Header::SIZE))?.header(size);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_decode_checks_command_and_header() {
        let mut b = [0u8; 16384];
        assert_eq!(
            Request::decode(0x1234, &b[..8]),
            Err(AbiError::UnknownCommand)
        );
        assert_eq!(
            Request::decode(GET_STATS, &b[..StatsMsg::SIZE]),
            Err(AbiError::BadSize)
        );
        request_header(GET_STATS, &mut b).unwrap();
        assert_eq!(
            Request::decode(GET_STATS, &b[..StatsMsg::SIZE]),
            Ok(Request::GetStats)
        );
        assert_eq!(Request::decode(GET_VERSION, &[]), Ok(Request::GetVersion));
    }
}
